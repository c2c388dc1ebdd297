-- Issue #30, write speed: the hourly and daily rows no longer carry a foreign key to their run.
-- PostgreSQL checks such a key row by row (a `SELECT 1 FROM ONLY forecast_runs … FOR KEY SHARE` per
-- row), which was about half of the server's time in the COPY of a run's rows (EXPLAIN ANALYZE of
-- 38,400 hourly rows: 900-1,279 ms with the key, 417-585 ms without; docs/SCALING.md).
--
-- Integrity moves to wxdb: a run's rows are written in the run's own transaction, after its
-- forecast_runs row, and every path that deletes runs or their rows (prune, `locations remove
-- --purge`) deletes the hourly and daily rows explicitly in the same transaction, through one
-- function (Sources/PostgresStore/RunRows.swift), instead of relying on ON DELETE CASCADE.
-- `wxdb doctor --deep` reports rows whose run does not exist, and `--repair` deletes them.
-- The other keys stay (a run to its location, the content hashes to their run): they are checked
-- once per run, not once per row.

-- As 0002: one connection per worker for this migration's DDL on Citus (a placeholder elsewhere).
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
-- The names PostgreSQL gave the keys 0001 added without a name (table_columns_fkey).
ALTER TABLE hourly_forecasts DROP CONSTRAINT hourly_forecasts_location_id_run_id_fkey;
ALTER TABLE daily_forecasts DROP CONSTRAINT daily_forecasts_location_id_run_id_fkey;
