-- The views again, with ISO 8601 UTC text beside each integer instant (issued_at_utc, fetched_at_utc,
-- valid_time_utc), so people browsing with sqlite3 or Datasette can read the times. Views only:
-- no stored row changes, and wxdb's own queries still read the integers.

DROP VIEW forecast_observation_pairs;
DROP VIEW hourly_forecasts_with_lead;

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
