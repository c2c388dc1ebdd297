-- Issue #25 §4: mean directions. The kept sums held Σf and Σo of wind directions, whose quotient is
-- no mean direction (350° and 10° average to 180°), so verify showed no mean forecast or observed
-- direction. Each summary group of a direction now also keeps Σsin and Σcos of the forecast and
-- observed angles (the circular mean is atan2 of the mean sine and cosine), and `direction_n`, the
-- pairs they hold.
--
-- Existing groups are filled from their stored pairs right after migrating (Store.finishMigration0013,
-- one location per transaction, resumable). Pairs already pruned cannot be summed again: such a group
-- keeps direction_n below n and shows no mean direction, while its bias, MAE and RMSE stay as they were.
ALTER TABLE verification_summaries ADD COLUMN direction_n INTEGER;
ALTER TABLE verification_summaries ADD COLUMN sum_sin_f REAL;
ALTER TABLE verification_summaries ADD COLUMN sum_cos_f REAL;
ALTER TABLE verification_summaries ADD COLUMN sum_sin_o REAL;
ALTER TABLE verification_summaries ADD COLUMN sum_cos_o REAL;

CREATE TABLE migration_0013_pending (location_id INTEGER PRIMARY KEY) STRICT;
INSERT OR IGNORE INTO migration_0013_pending (location_id)
    SELECT DISTINCT location_id FROM verification_summaries WHERE variable = 'wind_direction_10m';

-- `current` per model (issue #25 §1, as analysis:<model> in 0012): a response's `current` block is
-- the first requested model's (Open-Meteo does not suffix it), and is now stored as
-- 'current:<model>'; the pairs view leaves out a model's pairs with its own current conditions.
-- Rows stored before stay 'current' (which model a fetch listed first is not kept for them); they
-- are model output too, ranked last, and said to be so.
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
  -- A model's own past hours, or its own current conditions, are not a truth to score it against.
  AND o.source IS NOT 'analysis:' || r.model
  AND o.source IS NOT 'current:' || r.model;
