-- Issue #25: analysis kept per model, and true instants at UTC offsets that are not whole hours.
--
-- 1. 'analysis' observations were the past hours of whichever model a response listed first, so a
--    model was scored against itself. They are now one source per model, 'analysis:<model>', and
--    the pairs view leaves out a model's pairs with its own analysis.
-- 2. Open-Meteo reads hourly data at whole UTC hours under the offset truncated toward zero
--    (+05:45 reads as +05:00) and only labels them with the actual offset; wxdb took label − offset,
--    so at +05:30, +05:45, +09:30, −03:30 ... every forecast hour, analysis and ERA5 hour sat 15 to
--    45 minutes off the hour it belongs to and never paired with station hours.
--
-- Both need what only Swift has (the sums of the pairs, the locations' zones), so this migration
-- changes the view and lists the locations to move; wxdb moves them right after migrating, one
-- location per transaction (an interrupted run resumes with the locations left), in
-- Store.finishMigration0012: it renames each 'analysis' row after the model the fetch log says its
-- fetch stored first (left as 'analysis' where the log cannot tell), moves the stored hours of runs
-- fetched at such an offset and the 'analysis'/'era5' hours off the hour to the whole UTC hour they
-- were read at, and moves the sums of the location's pairs with them.
DROP VIEW forecast_observation_pairs;
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
WHERE h.valid_time - r.issued_at >= 0
  -- A model's own past hours are not a truth to score it against.
  AND o.source IS NOT 'analysis:' || r.model;

CREATE TABLE migration_0012_pending (location_id INTEGER PRIMARY KEY) STRICT;
INSERT OR IGNORE INTO migration_0012_pending (location_id)
    SELECT DISTINCT location_id FROM observations WHERE source = 'analysis'
    UNION SELECT DISTINCT location_id FROM forecast_runs WHERE utc_offset_seconds % 3600 != 0
    UNION SELECT DISTINCT location_id FROM observations WHERE source = 'era5' AND time % 3600 != 0;
