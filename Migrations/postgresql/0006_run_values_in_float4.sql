-- Issue #30, bytes per stored value (target <= 12 B): a run's hourly and daily values in 4-byte
-- `real` columns when every one of them survives the trip exactly, in double precision otherwise.
--
-- A value goes into float4 only when the double read back from float4's shortest text (float4out
-- with extra_float_digits >= 1, PostgreSQL's default since 12, which wxdb's sessions keep) equals
-- it bit for bit: 21.3, 0.5, 1013.2, 87 do; 0.1 + 0.2, or a degree Fahrenheit converted to Celsius,
-- do not. wxdb decides per run (Sources/PostgresStore/Float4.swift), so a run is wholly in one of
-- the tables below: the `_f4` tables (real values, primary key at fillfactor 100, the daily
-- table's fixed-width columns first) or the `_f8` tables (the tables until now, renamed). The
-- views named as the tables were, `hourly_forecasts` and `daily_forecasts`, give every read the
-- same columns and the same doubles as before: a float4 value as `col::text::float8`, the double
-- of its shortest text, which is the value stored. Measured on the bench's rows: 16.0 B a value
-- with keys and indexes before, ~11.9 B after (docs/SCALING.md).
--
-- Rows stored before this migration move to the `_f4` tables when their whole run is exact there,
-- in key order (so the new index is built from sorted rows); the others stay in `_f8`.

-- As 0002: one connection per worker for this migration's DDL on Citus (a placeholder elsewhere).
-- The exactness test below needs no setting of its own: at extra_float_digits < 1 float4's text is
-- shorter, fails to give the value back, and the run only stays in double precision.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- One block: Citus sends some of these statements on to the workers as their query's text, which
-- must be that one statement, not this whole file (as it is when the file is one query).
DO $migration$
BEGIN

ALTER TABLE hourly_forecasts RENAME TO hourly_forecasts_f8;
ALTER TABLE daily_forecasts RENAME TO daily_forecasts_f8;

CREATE TABLE hourly_forecasts_f4 (
    location_id               bigint NOT NULL,
    run_id                    bigint NOT NULL,
    valid_time                bigint NOT NULL,
    temperature_2m            real,
    relative_humidity_2m      real,
    dew_point_2m              real,
    apparent_temperature      real,
    precipitation_probability real,
    precipitation             real,
    weather_code              real,
    cloud_cover               real,
    pressure_msl              real,
    wind_speed_10m            real,
    wind_direction_10m        real,
    wind_gusts_10m            real,
    PRIMARY KEY (location_id, run_id, valid_time) WITH (fillfactor = 100)
);

-- The 8-byte columns first, then the 4-byte ones, the text last: no padding between them.
CREATE TABLE daily_forecasts_f4 (
    location_id                   bigint NOT NULL,
    run_id                        bigint NOT NULL,
    sunrise                       bigint,
    sunset                        bigint,
    weather_code                  real,
    temperature_2m_max            real,
    temperature_2m_min            real,
    precipitation_sum             real,
    precipitation_probability_max real,
    wind_speed_10m_max            real,
    date                          text   NOT NULL,
    PRIMARY KEY (location_id, run_id, date) WITH (fillfactor = 100)
);

IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM create_distributed_table('hourly_forecasts_f4', 'location_id', colocate_with => 'location_counters');
    PERFORM create_distributed_table('daily_forecasts_f4', 'location_id', colocate_with => 'location_counters');
END IF;

CREATE VIEW hourly_forecasts AS
SELECT location_id, run_id, valid_time,
       temperature_2m::text::float8 AS temperature_2m,
       relative_humidity_2m::text::float8 AS relative_humidity_2m,
       dew_point_2m::text::float8 AS dew_point_2m,
       apparent_temperature::text::float8 AS apparent_temperature,
       precipitation_probability::text::float8 AS precipitation_probability,
       precipitation::text::float8 AS precipitation,
       weather_code::text::float8 AS weather_code,
       cloud_cover::text::float8 AS cloud_cover,
       pressure_msl::text::float8 AS pressure_msl,
       wind_speed_10m::text::float8 AS wind_speed_10m,
       wind_direction_10m::text::float8 AS wind_direction_10m,
       wind_gusts_10m::text::float8 AS wind_gusts_10m
FROM hourly_forecasts_f4
UNION ALL
SELECT location_id, run_id, valid_time, temperature_2m, relative_humidity_2m, dew_point_2m, apparent_temperature, precipitation_probability, precipitation, weather_code, cloud_cover, pressure_msl, wind_speed_10m, wind_direction_10m, wind_gusts_10m
FROM hourly_forecasts_f8;

CREATE VIEW daily_forecasts AS
SELECT location_id, run_id, date,
       weather_code::text::float8 AS weather_code,
       temperature_2m_max::text::float8 AS temperature_2m_max,
       temperature_2m_min::text::float8 AS temperature_2m_min,
       precipitation_sum::text::float8 AS precipitation_sum,
       precipitation_probability_max::text::float8 AS precipitation_probability_max,
       wind_speed_10m_max::text::float8 AS wind_speed_10m_max,
       sunrise, sunset
FROM daily_forecasts_f4
UNION ALL
SELECT location_id, run_id, date, weather_code, temperature_2m_max, temperature_2m_min, precipitation_sum, precipitation_probability_max, wind_speed_10m_max, sunrise, sunset
FROM daily_forecasts_f8;

-- The views over the hourly rows, as 0001 and 0002 made them: renaming the table above left them
-- reading hourly_forecasts_f8 alone; now they read the view of both tables again.
CREATE OR REPLACE VIEW hourly_forecasts_with_lead AS
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

-- Rows stored before this migration: a run whose every value float4 gives back exactly moves to
-- the _f4 tables, in key order. (Subqueries on location_id, not a temporary table: Citus runs
-- them shard by shard, and does not join its tables with a local one.)
INSERT INTO hourly_forecasts_f4
SELECT h.location_id, h.run_id, h.valid_time, h.temperature_2m::real, h.relative_humidity_2m::real, h.dew_point_2m::real, h.apparent_temperature::real, h.precipitation_probability::real, h.precipitation::real, h.weather_code::real, h.cloud_cover::real, h.pressure_msl::real, h.wind_speed_10m::real, h.wind_direction_10m::real, h.wind_gusts_10m::real
FROM hourly_forecasts_f8 h
WHERE NOT EXISTS (SELECT 1 FROM hourly_forecasts_f8 x WHERE x.location_id = h.location_id AND x.run_id = h.run_id
                  AND NOT ((x.temperature_2m IS NULL OR x.temperature_2m = 0 OR (abs(x.temperature_2m) BETWEEN 1e-30 AND 1e30 AND x.temperature_2m::real::text::float8 = x.temperature_2m))
                       AND (x.relative_humidity_2m IS NULL OR x.relative_humidity_2m = 0 OR (abs(x.relative_humidity_2m) BETWEEN 1e-30 AND 1e30 AND x.relative_humidity_2m::real::text::float8 = x.relative_humidity_2m))
                       AND (x.dew_point_2m IS NULL OR x.dew_point_2m = 0 OR (abs(x.dew_point_2m) BETWEEN 1e-30 AND 1e30 AND x.dew_point_2m::real::text::float8 = x.dew_point_2m))
                       AND (x.apparent_temperature IS NULL OR x.apparent_temperature = 0 OR (abs(x.apparent_temperature) BETWEEN 1e-30 AND 1e30 AND x.apparent_temperature::real::text::float8 = x.apparent_temperature))
                       AND (x.precipitation_probability IS NULL OR x.precipitation_probability = 0 OR (abs(x.precipitation_probability) BETWEEN 1e-30 AND 1e30 AND x.precipitation_probability::real::text::float8 = x.precipitation_probability))
                       AND (x.precipitation IS NULL OR x.precipitation = 0 OR (abs(x.precipitation) BETWEEN 1e-30 AND 1e30 AND x.precipitation::real::text::float8 = x.precipitation))
                       AND (x.weather_code IS NULL OR x.weather_code = 0 OR (abs(x.weather_code) BETWEEN 1e-30 AND 1e30 AND x.weather_code::real::text::float8 = x.weather_code))
                       AND (x.cloud_cover IS NULL OR x.cloud_cover = 0 OR (abs(x.cloud_cover) BETWEEN 1e-30 AND 1e30 AND x.cloud_cover::real::text::float8 = x.cloud_cover))
                       AND (x.pressure_msl IS NULL OR x.pressure_msl = 0 OR (abs(x.pressure_msl) BETWEEN 1e-30 AND 1e30 AND x.pressure_msl::real::text::float8 = x.pressure_msl))
                       AND (x.wind_speed_10m IS NULL OR x.wind_speed_10m = 0 OR (abs(x.wind_speed_10m) BETWEEN 1e-30 AND 1e30 AND x.wind_speed_10m::real::text::float8 = x.wind_speed_10m))
                       AND (x.wind_direction_10m IS NULL OR x.wind_direction_10m = 0 OR (abs(x.wind_direction_10m) BETWEEN 1e-30 AND 1e30 AND x.wind_direction_10m::real::text::float8 = x.wind_direction_10m))
                       AND (x.wind_gusts_10m IS NULL OR x.wind_gusts_10m = 0 OR (abs(x.wind_gusts_10m) BETWEEN 1e-30 AND 1e30 AND x.wind_gusts_10m::real::text::float8 = x.wind_gusts_10m))))
  AND NOT EXISTS (SELECT 1 FROM daily_forecasts_f8 y WHERE y.location_id = h.location_id AND y.run_id = h.run_id
                  AND NOT ((y.weather_code IS NULL OR y.weather_code = 0 OR (abs(y.weather_code) BETWEEN 1e-30 AND 1e30 AND y.weather_code::real::text::float8 = y.weather_code))
                       AND (y.temperature_2m_max IS NULL OR y.temperature_2m_max = 0 OR (abs(y.temperature_2m_max) BETWEEN 1e-30 AND 1e30 AND y.temperature_2m_max::real::text::float8 = y.temperature_2m_max))
                       AND (y.temperature_2m_min IS NULL OR y.temperature_2m_min = 0 OR (abs(y.temperature_2m_min) BETWEEN 1e-30 AND 1e30 AND y.temperature_2m_min::real::text::float8 = y.temperature_2m_min))
                       AND (y.precipitation_sum IS NULL OR y.precipitation_sum = 0 OR (abs(y.precipitation_sum) BETWEEN 1e-30 AND 1e30 AND y.precipitation_sum::real::text::float8 = y.precipitation_sum))
                       AND (y.precipitation_probability_max IS NULL OR y.precipitation_probability_max = 0 OR (abs(y.precipitation_probability_max) BETWEEN 1e-30 AND 1e30 AND y.precipitation_probability_max::real::text::float8 = y.precipitation_probability_max))
                       AND (y.wind_speed_10m_max IS NULL OR y.wind_speed_10m_max = 0 OR (abs(y.wind_speed_10m_max) BETWEEN 1e-30 AND 1e30 AND y.wind_speed_10m_max::real::text::float8 = y.wind_speed_10m_max))))
ORDER BY h.location_id, h.run_id, h.valid_time;
INSERT INTO daily_forecasts_f4
SELECT d.location_id, d.run_id, d.sunrise, d.sunset, d.weather_code::real, d.temperature_2m_max::real, d.temperature_2m_min::real, d.precipitation_sum::real, d.precipitation_probability_max::real, d.wind_speed_10m_max::real, d.date
FROM daily_forecasts_f8 d
WHERE NOT EXISTS (SELECT 1 FROM hourly_forecasts_f8 x WHERE x.location_id = d.location_id AND x.run_id = d.run_id
                  AND NOT ((x.temperature_2m IS NULL OR x.temperature_2m = 0 OR (abs(x.temperature_2m) BETWEEN 1e-30 AND 1e30 AND x.temperature_2m::real::text::float8 = x.temperature_2m))
                       AND (x.relative_humidity_2m IS NULL OR x.relative_humidity_2m = 0 OR (abs(x.relative_humidity_2m) BETWEEN 1e-30 AND 1e30 AND x.relative_humidity_2m::real::text::float8 = x.relative_humidity_2m))
                       AND (x.dew_point_2m IS NULL OR x.dew_point_2m = 0 OR (abs(x.dew_point_2m) BETWEEN 1e-30 AND 1e30 AND x.dew_point_2m::real::text::float8 = x.dew_point_2m))
                       AND (x.apparent_temperature IS NULL OR x.apparent_temperature = 0 OR (abs(x.apparent_temperature) BETWEEN 1e-30 AND 1e30 AND x.apparent_temperature::real::text::float8 = x.apparent_temperature))
                       AND (x.precipitation_probability IS NULL OR x.precipitation_probability = 0 OR (abs(x.precipitation_probability) BETWEEN 1e-30 AND 1e30 AND x.precipitation_probability::real::text::float8 = x.precipitation_probability))
                       AND (x.precipitation IS NULL OR x.precipitation = 0 OR (abs(x.precipitation) BETWEEN 1e-30 AND 1e30 AND x.precipitation::real::text::float8 = x.precipitation))
                       AND (x.weather_code IS NULL OR x.weather_code = 0 OR (abs(x.weather_code) BETWEEN 1e-30 AND 1e30 AND x.weather_code::real::text::float8 = x.weather_code))
                       AND (x.cloud_cover IS NULL OR x.cloud_cover = 0 OR (abs(x.cloud_cover) BETWEEN 1e-30 AND 1e30 AND x.cloud_cover::real::text::float8 = x.cloud_cover))
                       AND (x.pressure_msl IS NULL OR x.pressure_msl = 0 OR (abs(x.pressure_msl) BETWEEN 1e-30 AND 1e30 AND x.pressure_msl::real::text::float8 = x.pressure_msl))
                       AND (x.wind_speed_10m IS NULL OR x.wind_speed_10m = 0 OR (abs(x.wind_speed_10m) BETWEEN 1e-30 AND 1e30 AND x.wind_speed_10m::real::text::float8 = x.wind_speed_10m))
                       AND (x.wind_direction_10m IS NULL OR x.wind_direction_10m = 0 OR (abs(x.wind_direction_10m) BETWEEN 1e-30 AND 1e30 AND x.wind_direction_10m::real::text::float8 = x.wind_direction_10m))
                       AND (x.wind_gusts_10m IS NULL OR x.wind_gusts_10m = 0 OR (abs(x.wind_gusts_10m) BETWEEN 1e-30 AND 1e30 AND x.wind_gusts_10m::real::text::float8 = x.wind_gusts_10m))))
  AND NOT EXISTS (SELECT 1 FROM daily_forecasts_f8 y WHERE y.location_id = d.location_id AND y.run_id = d.run_id
                  AND NOT ((y.weather_code IS NULL OR y.weather_code = 0 OR (abs(y.weather_code) BETWEEN 1e-30 AND 1e30 AND y.weather_code::real::text::float8 = y.weather_code))
                       AND (y.temperature_2m_max IS NULL OR y.temperature_2m_max = 0 OR (abs(y.temperature_2m_max) BETWEEN 1e-30 AND 1e30 AND y.temperature_2m_max::real::text::float8 = y.temperature_2m_max))
                       AND (y.temperature_2m_min IS NULL OR y.temperature_2m_min = 0 OR (abs(y.temperature_2m_min) BETWEEN 1e-30 AND 1e30 AND y.temperature_2m_min::real::text::float8 = y.temperature_2m_min))
                       AND (y.precipitation_sum IS NULL OR y.precipitation_sum = 0 OR (abs(y.precipitation_sum) BETWEEN 1e-30 AND 1e30 AND y.precipitation_sum::real::text::float8 = y.precipitation_sum))
                       AND (y.precipitation_probability_max IS NULL OR y.precipitation_probability_max = 0 OR (abs(y.precipitation_probability_max) BETWEEN 1e-30 AND 1e30 AND y.precipitation_probability_max::real::text::float8 = y.precipitation_probability_max))
                       AND (y.wind_speed_10m_max IS NULL OR y.wind_speed_10m_max = 0 OR (abs(y.wind_speed_10m_max) BETWEEN 1e-30 AND 1e30 AND y.wind_speed_10m_max::real::text::float8 = y.wind_speed_10m_max))))
ORDER BY d.location_id, d.run_id, d.date;
DELETE FROM hourly_forecasts_f8 h
WHERE EXISTS (SELECT 1 FROM hourly_forecasts_f4 x WHERE x.location_id = h.location_id AND x.run_id = h.run_id);
DELETE FROM daily_forecasts_f8 d
WHERE EXISTS (SELECT 1 FROM daily_forecasts_f4 x WHERE x.location_id = d.location_id AND x.run_id = d.run_id);
END
$migration$;
