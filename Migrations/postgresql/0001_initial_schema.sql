-- wxdb's schema on PostgreSQL: the SQLite schema as of its migration 0012 (Migrations/*.sql),
-- laid out so that Citus can spread it over machines by location. Instants are bigint UTC unix
-- seconds and values double precision, exactly as SQLite stores them, so both engines give the
-- same answers byte for byte; one row per run hour with the variables as columns (one row per
-- value would cost 50-90 bytes a value here).
--
-- Distribution rules (../shared/reference/round3.md §1c):
-- - every table that grows carries location_id, and every primary key and unique constraint
--   includes it; every join between growing tables is on it (forecast rows join their run on
--   (location_id, run_id));
-- - no id that only one node could hand out: run ids and fetch ids count per location
--   (location_counters, under the location's advisory lock), not from a global sequence;
-- - small tables (locations, schema_migrations, verification_sums_pending) are reference tables;
-- - foreign keys only from growing tables to their location's run or to a reference table,
--   added after the tables are distributed (Citus refuses to distribute a table a local one refers to).
-- When the database has the citus extension this migration distributes the tables itself.

CREATE TABLE locations (
    id          bigint           NOT NULL PRIMARY KEY CHECK (id > 0),
    name        text             NOT NULL UNIQUE,
    latitude    double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude   double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    elevation   double precision,
    timezone    text             NOT NULL DEFAULT 'GMT',
    -- comma-separated Open-Meteo model names, first one is the default
    models      text             NOT NULL DEFAULT 'best_match',
    created_at  bigint           NOT NULL
);

-- The next run id and fetch id of each location: ids are per location, so any node can hand
-- them out for the locations it holds.
CREATE TABLE location_counters (
    location_id   bigint NOT NULL PRIMARY KEY,
    next_run_id   bigint NOT NULL DEFAULT 1,
    next_fetch_id bigint NOT NULL DEFAULT 1
);

-- One distinct forecast: fetching the same content again adds a fetch_log row, not a run.
CREATE TABLE forecast_runs (
    location_id        bigint           NOT NULL,
    id                 bigint           NOT NULL,
    model              text             NOT NULL,
    -- model initialisation time when known: from the model's metadata at fetch time
    -- ('model_run') or asked for from the Single Runs API ('single_run'); else the first
    -- fetched_at of this content ('first_fetch')
    issued_at          bigint           NOT NULL,
    issued_at_source   text             NOT NULL CHECK (issued_at_source IN ('model_run', 'first_fetch', 'single_run')),
    fetched_at         bigint           NOT NULL,
    grid_latitude      double precision,
    grid_longitude     double precision,
    grid_elevation     double precision,
    utc_offset_seconds bigint           NOT NULL,
    timezone           text             NOT NULL,
    content_hash       bigint           NOT NULL,
    first_valid_time   bigint,
    last_valid_time    bigint,
    hour_count         bigint           NOT NULL DEFAULT 0,
    day_count          bigint           NOT NULL DEFAULT 0,
    pruned_at          bigint,
    PRIMARY KEY (location_id, id)
);
CREATE INDEX forecast_runs_by_location_model_issued ON forecast_runs (location_id, model, issued_at);
CREATE INDEX forecast_runs_by_location_issued ON forecast_runs (location_id, issued_at);
CREATE INDEX forecast_runs_by_content ON forecast_runs (location_id, model, content_hash);
CREATE INDEX forecast_runs_by_window_start ON forecast_runs (location_id, model, first_valid_time, last_valid_time);
CREATE INDEX forecast_runs_by_window_end ON forecast_runs (location_id, model, last_valid_time, first_valid_time);

CREATE TABLE hourly_forecasts (
    location_id               bigint NOT NULL,
    run_id                    bigint NOT NULL,
    valid_time                bigint NOT NULL,
    temperature_2m            double precision,
    relative_humidity_2m      double precision,
    dew_point_2m              double precision,
    apparent_temperature      double precision,
    precipitation_probability double precision,
    precipitation             double precision,
    weather_code              double precision,
    cloud_cover               double precision,
    pressure_msl              double precision,
    wind_speed_10m            double precision,
    wind_direction_10m        double precision,
    wind_gusts_10m            double precision,
    PRIMARY KEY (location_id, run_id, valid_time)
);

CREATE TABLE daily_forecasts (
    location_id                   bigint NOT NULL,
    run_id                        bigint NOT NULL,
    date                          text   NOT NULL,
    weather_code                  double precision,
    temperature_2m_max            double precision,
    temperature_2m_min            double precision,
    precipitation_sum             double precision,
    precipitation_probability_max double precision,
    wind_speed_10m_max            double precision,
    sunrise                       bigint,
    sunset                        bigint,
    PRIMARY KEY (location_id, run_id, date)
);

CREATE TABLE observations (
    location_id               bigint NOT NULL,
    source                    text   NOT NULL,
    time                      bigint NOT NULL,
    temperature_2m            double precision,
    relative_humidity_2m      double precision,
    dew_point_2m              double precision,
    apparent_temperature      double precision,
    precipitation_probability double precision,
    precipitation             double precision,
    weather_code              double precision,
    cloud_cover               double precision,
    pressure_msl              double precision,
    wind_speed_10m            double precision,
    wind_direction_10m        double precision,
    wind_gusts_10m            double precision,
    recorded_at               bigint NOT NULL,
    -- (location, time) first: pairing looks up the observation at a forecast's valid time.
    PRIMARY KEY (location_id, time, source)
);
CREATE INDEX observations_by_source ON observations (location_id, source, time);

CREATE TABLE run_content_hashes (
    location_id  bigint NOT NULL,
    model        text   NOT NULL,
    content_hash bigint NOT NULL,
    run_id       bigint NOT NULL,
    PRIMARY KEY (location_id, model, content_hash, run_id)
);
CREATE INDEX run_content_hashes_by_run ON run_content_hashes (location_id, run_id);

-- location_id 0 is an attempt no location can be named for (a batch that failed before any
-- answer); hence no foreign key to locations: removing a location removes its rows here itself.
CREATE TABLE fetch_log (
    location_id  bigint NOT NULL DEFAULT 0,
    id           bigint NOT NULL,
    attempted_at bigint NOT NULL,
    model        text,
    origin       text   NOT NULL CHECK (origin IN ('fetch', 'import', 'single_run')),
    outcome      text   NOT NULL CHECK (outcome IN ('stored', 'repeated', 'failed')),
    http_status  bigint,
    error        text,
    duration_ms  bigint,
    run_id       bigint,
    -- the request URL without any API key, or the imported file's path
    request      text,
    api_weight   double precision,
    PRIMARY KEY (location_id, id)
);
CREATE INDEX fetch_log_by_location_time ON fetch_log (location_id, attempted_at);
CREATE INDEX fetch_log_by_run ON fetch_log (location_id, run_id);
CREATE INDEX fetch_log_by_time ON fetch_log (attempted_at);

-- Verification sums kept as data arrives: one row per (location, source, variable, model,
-- local day, lead bucket), as in SQLite's migrations 0010 and 0011.
CREATE TABLE verification_summaries (
    location_id             bigint           NOT NULL,
    model                   text             NOT NULL,
    source                  text             NOT NULL,
    variable                text             NOT NULL,
    lead_from_h             bigint           NOT NULL,
    lead_to_h               bigint           NOT NULL,
    valid_date              text             NOT NULL,
    n                       bigint           NOT NULL,
    sum_f                   double precision NOT NULL,
    sum_o                   double precision NOT NULL,
    sum_ff                  double precision NOT NULL,
    sum_oo                  double precision NOT NULL,
    sum_fo                  double precision NOT NULL,
    sum_abs_err             double precision NOT NULL,
    sum_err                 double precision NOT NULL,
    sum_err_sq              double precision NOT NULL,
    hits                    bigint,
    false_alarms            bigint,
    misses                  bigint,
    correct_negatives       bigint,
    brier_n                 bigint,
    brier_sum               double precision,
    brier_events            bigint,
    valid_from              bigint           NOT NULL,
    valid_to                bigint           NOT NULL,
    persistence_n           bigint,
    forecast_sum_err_sq_ref double precision,
    persistence_sum_err_sq  double precision,
    first_valid_time        bigint,
    last_valid_time         bigint,
    PRIMARY KEY (location_id, source, variable, model, valid_from, lead_from_h)
);

-- One row while the sums of rows stored before the sums existed are still to be added.
CREATE TABLE verification_sums_pending (id integer PRIMARY KEY CHECK (id = 1));

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        -- One connection per worker for this transaction's DDL: Citus cannot mix parallel
        -- shard DDL with the reference tables created in the same transaction.
        SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
        PERFORM create_reference_table('schema_migrations');
        PERFORM create_reference_table('locations');
        PERFORM create_reference_table('verification_sums_pending');
        PERFORM create_distributed_table('location_counters', 'location_id');
        PERFORM create_distributed_table('forecast_runs', 'location_id', colocate_with => 'location_counters');
        PERFORM create_distributed_table('hourly_forecasts', 'location_id', colocate_with => 'location_counters');
        PERFORM create_distributed_table('daily_forecasts', 'location_id', colocate_with => 'location_counters');
        PERFORM create_distributed_table('observations', 'location_id', colocate_with => 'location_counters');
        PERFORM create_distributed_table('run_content_hashes', 'location_id', colocate_with => 'location_counters');
        PERFORM create_distributed_table('fetch_log', 'location_id', colocate_with => 'location_counters');
        PERFORM create_distributed_table('verification_summaries', 'location_id', colocate_with => 'location_counters');
    END IF;
END
$$;

ALTER TABLE location_counters ADD FOREIGN KEY (location_id) REFERENCES locations (id) ON DELETE CASCADE;
ALTER TABLE forecast_runs ADD FOREIGN KEY (location_id) REFERENCES locations (id) ON DELETE CASCADE;
ALTER TABLE hourly_forecasts
    ADD FOREIGN KEY (location_id, run_id) REFERENCES forecast_runs (location_id, id) ON DELETE CASCADE;
ALTER TABLE daily_forecasts
    ADD FOREIGN KEY (location_id, run_id) REFERENCES forecast_runs (location_id, id) ON DELETE CASCADE;
ALTER TABLE observations ADD FOREIGN KEY (location_id) REFERENCES locations (id) ON DELETE CASCADE;
ALTER TABLE run_content_hashes
    ADD FOREIGN KEY (location_id, run_id) REFERENCES forecast_runs (location_id, id) ON DELETE CASCADE;
ALTER TABLE verification_summaries ADD FOREIGN KEY (location_id) REFERENCES locations (id) ON DELETE CASCADE;

-- The readable views of SQLite's schema (migrations 0002, 0008, 0012), same columns.
CREATE VIEW hourly_forecasts_with_lead AS
SELECT
    l.name AS location,
    r.location_id,
    r.model,
    r.id AS run_id,
    r.issued_at,
    to_char(to_timestamp(r.issued_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS issued_at_utc,
    r.fetched_at,
    to_char(to_timestamp(r.fetched_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS fetched_at_utc,
    h.valid_time,
    to_char(to_timestamp(h.valid_time) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS valid_time_utc,
    (h.valid_time - r.issued_at) / 3600.0::double precision AS lead_hours,
    h.temperature_2m, h.relative_humidity_2m, h.dew_point_2m, h.apparent_temperature, h.precipitation_probability,
    h.precipitation, h.weather_code, h.cloud_cover, h.pressure_msl, h.wind_speed_10m, h.wind_direction_10m,
    h.wind_gusts_10m
FROM locations l
JOIN forecast_runs r ON r.location_id = l.id
JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id;

CREATE VIEW forecast_observation_pairs AS
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
  -- A model's own past hours are not a truth to score it against.
  AND o.source IS DISTINCT FROM 'analysis:' || r.model;
