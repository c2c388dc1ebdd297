-- The PostgreSQL schema brought level with SQLite's migrations 0013 and 0014 (Migrations/*.sql).
--
-- Issue #25 §4, mean directions (SQLite 0013): each summary group of a direction also keeps Σsin
-- and Σcos of the forecast and observed angles, and direction_n, the pairs they hold. Nothing was
-- summed on PostgreSQL before this migration (the engine kept no sums at 0001), so no group needs
-- filling from its pairs afterwards, unlike SQLite's migration_0013_pending.

-- On Citus, one connection per worker for this migration's DDL, from its first statement: run in
-- parallel, the ALTERs of the distributed verification_summaries and location_counters make Citus
-- refuse to distribute the new tables in the same transaction ("cannot distribute ... in sequential
-- mode because a parallel query was executed"). On a PostgreSQL without Citus the setting is an
-- unused placeholder for this transaction only.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
ALTER TABLE verification_summaries ADD COLUMN direction_n bigint;
ALTER TABLE verification_summaries ADD COLUMN sum_sin_f double precision;
ALTER TABLE verification_summaries ADD COLUMN sum_cos_f double precision;
ALTER TABLE verification_summaries ADD COLUMN sum_sin_o double precision;
ALTER TABLE verification_summaries ADD COLUMN sum_cos_o double precision;

-- Issue #25 §1, `current` per model (SQLite 0013): a response's current conditions are stored as
-- 'current:<model>', and the pairs view leaves out a model's pairs with its own current conditions,
-- as it leaves out its own analysis.
CREATE OR REPLACE VIEW forecast_observation_pairs AS
SELECT
    l.name AS location,
    r.location_id,
    r.model,
    r.id AS run_id,
    r.issued_at,
    to_char(to_timestamp(r.issued_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS issued_at_utc,
    h.valid_time,
    to_char(to_timestamp(h.valid_time) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS valid_time_utc,
    (h.valid_time - r.issued_at) / 3600.0::double precision AS lead_hours,
    o.source,
    h.temperature_2m AS forecast_temperature_2m,
    o.temperature_2m AS observed_temperature_2m,
    h.relative_humidity_2m AS forecast_relative_humidity_2m,
    o.relative_humidity_2m AS observed_relative_humidity_2m,
    h.dew_point_2m AS forecast_dew_point_2m,
    o.dew_point_2m AS observed_dew_point_2m,
    h.apparent_temperature AS forecast_apparent_temperature,
    o.apparent_temperature AS observed_apparent_temperature,
    h.precipitation_probability AS forecast_precipitation_probability,
    o.precipitation_probability AS observed_precipitation_probability,
    h.precipitation AS forecast_precipitation,
    o.precipitation AS observed_precipitation,
    h.weather_code AS forecast_weather_code,
    o.weather_code AS observed_weather_code,
    h.cloud_cover AS forecast_cloud_cover,
    o.cloud_cover AS observed_cloud_cover,
    h.pressure_msl AS forecast_pressure_msl,
    o.pressure_msl AS observed_pressure_msl,
    h.wind_speed_10m AS forecast_wind_speed_10m,
    o.wind_speed_10m AS observed_wind_speed_10m,
    h.wind_direction_10m AS forecast_wind_direction_10m,
    o.wind_direction_10m AS observed_wind_direction_10m,
    h.wind_gusts_10m AS forecast_wind_gusts_10m,
    o.wind_gusts_10m AS observed_wind_gusts_10m
FROM locations l
JOIN forecast_runs r ON r.location_id = l.id
JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id
JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time
WHERE h.valid_time - r.issued_at >= 0
  -- A model's own past hours, or its own current conditions, are not a truth to score it against.
  AND o.source IS DISTINCT FROM 'analysis:' || r.model
  AND o.source IS DISTINCT FROM 'current:' || r.model;

-- Issue #31, ensemble runs (SQLite 0014): every member of a run of an ensemble model, kept
-- compactly. Laid out for Citus as 0001's tables: location_id first in every key, run ids counted
-- per location (location_counters.next_ensemble_run_id), members joined to their run on
-- (location_id, run_id).
ALTER TABLE location_counters ADD COLUMN next_ensemble_run_id bigint NOT NULL DEFAULT 1;

-- One row per distinct ensemble forecast of a location and model: fetching the same content again
-- adds a fetch_log row, not a run (content_hash).
CREATE TABLE ensemble_runs (
    location_id       bigint           NOT NULL,
    id                bigint           NOT NULL,
    model             text             NOT NULL,
    -- the model initialisation time: given ('model_run') or, where no source tells it, the latest
    -- run on the model's cadence before the first fetch ('cadence')
    issued_at         bigint           NOT NULL,
    issued_at_source  text             NOT NULL CHECK (issued_at_source IN ('model_run', 'cadence')),
    fetched_at        bigint           NOT NULL,
    grid_latitude     double precision NOT NULL,
    grid_longitude    double precision NOT NULL,
    grid_elevation    double precision,
    first_valid_time  bigint           NOT NULL,
    hour_count        bigint           NOT NULL CHECK (hour_count > 0),
    member_count      bigint           NOT NULL CHECK (member_count > 0),
    content_hash      bigint           NOT NULL,
    PRIMARY KEY (location_id, id),
    UNIQUE (location_id, model, content_hash)
);
CREATE INDEX ensemble_runs_by_issue ON ensemble_runs (location_id, model, issued_at);

-- One run's members of one variable: hour_count × member_count little-endian IEEE 754 binary32,
-- hour-major (every member of the first valid hour, then the next hour's), NaN where a member has
-- no value: 4 bytes per member value, the same bytes as SQLite's BLOB.
CREATE TABLE ensemble_values (
    location_id bigint NOT NULL,
    run_id      bigint NOT NULL,
    variable    text   NOT NULL,
    members     bytea  NOT NULL,
    PRIMARY KEY (location_id, run_id, variable)
);

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
        PERFORM create_distributed_table('ensemble_runs', 'location_id', colocate_with => 'location_counters');
        PERFORM create_distributed_table('ensemble_values', 'location_id', colocate_with => 'location_counters');
    END IF;
END
$$;

ALTER TABLE ensemble_runs ADD FOREIGN KEY (location_id) REFERENCES locations (id) ON DELETE CASCADE;
ALTER TABLE ensemble_values
    ADD FOREIGN KEY (location_id, run_id) REFERENCES ensemble_runs (location_id, id) ON DELETE CASCADE;
