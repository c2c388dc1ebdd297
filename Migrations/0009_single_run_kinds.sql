-- Runs loaded from Open-Meteo's Single Runs API (`wxdb backfill`) are ordinary runs; only how
-- their issue time was known differs. forecast_runs.issued_at_source gains 'single_run' (the run
-- asked for by its initialisation time), and fetch_log.origin gains 'single_run' (a request to the
-- Single Runs API). SQLite changes a CHECK only by rebuilding the table: both tables are copied
-- row for row under the same ids, with their indexes, and the views over forecast_runs are made
-- again unchanged (the migrator runs this with foreign keys off and checks them before commit).

DROP VIEW forecast_observation_pairs;
DROP VIEW hourly_forecasts_with_lead;

CREATE TABLE forecast_runs_new (
    id                 INTEGER PRIMARY KEY,
    location_id        INTEGER NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
    model              TEXT    NOT NULL,
    -- model initialisation time when known: from the model's metadata at fetch time
    -- ('model_run') or asked for from the Single Runs API ('single_run'); else the first
    -- fetched_at of this content ('first_fetch')
    issued_at          INTEGER NOT NULL,
    issued_at_source   TEXT    NOT NULL CHECK (issued_at_source IN ('model_run', 'first_fetch', 'single_run')),
    fetched_at         INTEGER NOT NULL,
    grid_latitude      REAL,
    grid_longitude     REAL,
    grid_elevation     REAL,
    utc_offset_seconds INTEGER NOT NULL,
    timezone           TEXT    NOT NULL,
    content_hash       INTEGER NOT NULL,
    first_valid_time   INTEGER,
    last_valid_time    INTEGER,
    hour_count         INTEGER NOT NULL DEFAULT 0,
    day_count          INTEGER NOT NULL DEFAULT 0,
    pruned_at          INTEGER
) STRICT;
INSERT INTO forecast_runs_new (id, location_id, model, issued_at, issued_at_source, fetched_at, grid_latitude,
    grid_longitude, grid_elevation, utc_offset_seconds, timezone, content_hash, first_valid_time, last_valid_time,
    hour_count, day_count, pruned_at)
SELECT id, location_id, model, issued_at, issued_at_source, fetched_at, grid_latitude,
    grid_longitude, grid_elevation, utc_offset_seconds, timezone, content_hash, first_valid_time, last_valid_time,
    hour_count, day_count, pruned_at
FROM forecast_runs;
DROP TABLE forecast_runs;
ALTER TABLE forecast_runs_new RENAME TO forecast_runs;
CREATE INDEX forecast_runs_by_location_model_issued ON forecast_runs(location_id, model, issued_at);
CREATE INDEX forecast_runs_by_location_issued ON forecast_runs(location_id, issued_at);
CREATE INDEX forecast_runs_by_content ON forecast_runs(location_id, model, content_hash);

CREATE TABLE fetch_log_new (
    id           INTEGER PRIMARY KEY,
    attempted_at INTEGER NOT NULL,
    location_id  INTEGER REFERENCES locations(id) ON DELETE CASCADE,
    model        TEXT,
    origin       TEXT    NOT NULL CHECK (origin IN ('fetch', 'import', 'single_run')),
    outcome      TEXT    NOT NULL CHECK (outcome IN ('stored', 'repeated', 'failed')),
    http_status  INTEGER,
    error        TEXT,
    duration_ms  INTEGER,
    run_id       INTEGER REFERENCES forecast_runs(id) ON DELETE SET NULL,
    -- the request URL without any API key, or the imported file's path
    request      TEXT,
    api_weight   REAL
) STRICT;
INSERT INTO fetch_log_new (id, attempted_at, location_id, model, origin, outcome, http_status, error, duration_ms,
    run_id, request, api_weight)
SELECT id, attempted_at, location_id, model, origin, outcome, http_status, error, duration_ms,
    run_id, request, api_weight
FROM fetch_log;
DROP TABLE fetch_log;
ALTER TABLE fetch_log_new RENAME TO fetch_log;
CREATE INDEX fetch_log_by_location_time ON fetch_log(location_id, attempted_at);
CREATE INDEX fetch_log_by_run ON fetch_log(run_id);
CREATE INDEX fetch_log_by_time ON fetch_log(attempted_at);

CREATE VIEW hourly_forecasts_with_lead AS
SELECT
    l.name AS location,
    r.location_id,
    r.model,
    r.id AS run_id,
    r.issued_at,
    strftime('%Y-%m-%dT%H:%M:%SZ', r.issued_at, 'unixepoch') AS issued_at_utc,
    r.fetched_at,
    strftime('%Y-%m-%dT%H:%M:%SZ', r.fetched_at, 'unixepoch') AS fetched_at_utc,
    h.valid_time,
    strftime('%Y-%m-%dT%H:%M:%SZ', h.valid_time, 'unixepoch') AS valid_time_utc,
    (h.valid_time - r.issued_at) / 3600.0 AS lead_hours,
    h.temperature_2m, h.relative_humidity_2m, h.dew_point_2m, h.apparent_temperature, h.precipitation_probability, h.precipitation, h.weather_code, h.cloud_cover, h.pressure_msl, h.wind_speed_10m, h.wind_direction_10m, h.wind_gusts_10m
FROM locations l
CROSS JOIN forecast_runs r ON r.location_id = l.id
CROSS JOIN hourly_forecasts h ON h.run_id = r.id;

CREATE VIEW forecast_observation_pairs AS
SELECT
    l.name AS location,
    r.location_id,
    r.model,
    r.id AS run_id,
    r.issued_at,
    strftime('%Y-%m-%dT%H:%M:%SZ', r.issued_at, 'unixepoch') AS issued_at_utc,
    h.valid_time,
    strftime('%Y-%m-%dT%H:%M:%SZ', h.valid_time, 'unixepoch') AS valid_time_utc,
    (h.valid_time - r.issued_at) / 3600.0 AS lead_hours,
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
CROSS JOIN forecast_runs r ON r.location_id = l.id
CROSS JOIN hourly_forecasts h ON h.run_id = r.id
CROSS JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time
WHERE h.valid_time - r.issued_at >= 0;
