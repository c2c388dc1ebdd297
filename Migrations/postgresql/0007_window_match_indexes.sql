-- Issue #30, write speed: the indexes of forecast_runs that led the window match (the query that
-- finds an earlier copy of a model run, Sources/PostgresStore/Runs.swift `candidateRunsSQL`) away
-- from the window indexes are dropped; no query of wxdb's needs them.
--
-- An import stores thousands of runs in one transaction into tables that have no statistics yet
-- (autovacuum analyses only what is committed). Every row estimate then clamps to one row, and
-- among the indexes that start with (location_id, model) the smallest wins: by_location_model_issued
-- or by_content, which read every run of the model to find the few near the new one's window (the
-- plan reused for a prepared statement was this one most of the time). Without them the window
-- indexes are the only ones that match the query's location and model; the others match only its
-- location and lose as soon as a table holds a few hundred runs.
--
-- by_content served nothing: a run's content is looked up in run_content_hashes (every hash a run
-- has had). by_location_model_issued served reads by model and issue time (a backfill's known runs,
-- prune's newer-run test, the pruned-run counts); by_location_issued serves them now, with the model
-- checked on the rows of the location's other models read alongside (a location has a few models).

-- As 0002: one connection per worker for this migration's DDL on Citus (a placeholder elsewhere).
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- One block, as 0006: Citus sends a DROP INDEX on to the workers as its query's text, which must
-- be that one statement, not this whole file.
DO $migration$
BEGIN
DROP INDEX forecast_runs_by_content;
DROP INDEX forecast_runs_by_location_model_issued;
END
$migration$;
