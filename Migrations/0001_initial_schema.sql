-- wxdb's first schema. Instants are integer UTC unix seconds; values are Open-Meteo's metric
-- units (°C, %, mm, hPa, km/h, degrees, WMO code). A NULL value means the response had none.

CREATE TABLE locations (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    latitude    REAL    NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude   REAL    NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    elevation   REAL,
    timezone    TEXT    NOT NULL DEFAULT 'GMT',
    -- comma-separated Open-Meteo model names, first one is the default
    models      TEXT    NOT NULL DEFAULT 'best_match',
    created_at  INTEGER NOT NULL
) STRICT;

-- One distinct forecast: fetching the same content again adds a fetch_log row, not a run.
CREATE TABLE forecast_runs (
    id                 INTEGER PRIMARY KEY,
    location_id        INTEGER NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
    model              TEXT    NOT NULL,
    -- model initialisation time when known (issued_at_source = 'model_run'),
    -- else the first fetched_at of this content ('first_fetch')
    issued_at          INTEGER NOT NULL,
    issued_at_source   TEXT    NOT NULL CHECK (issued_at_source IN ('model_run', 'first_fetch')),
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
    day_count          INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX forecast_runs_by_location_model_issued ON forecast_runs(location_id, model, issued_at);
CREATE INDEX forecast_runs_by_location_issued ON forecast_runs(location_id, issued_at);
-- Recognises content already stored for a location and model, however long ago.
CREATE INDEX forecast_runs_by_content ON forecast_runs(location_id, model, content_hash);

-- Every fetch or import attempt, successful or not.
CREATE TABLE fetch_log (
    id           INTEGER PRIMARY KEY,
    attempted_at INTEGER NOT NULL,
    location_id  INTEGER REFERENCES locations(id) ON DELETE CASCADE,
    model        TEXT,
    origin       TEXT    NOT NULL CHECK (origin IN ('fetch', 'import')),
    outcome      TEXT    NOT NULL CHECK (outcome IN ('stored', 'repeated', 'failed')),
    http_status  INTEGER,
    error        TEXT,
    duration_ms  INTEGER,
    run_id       INTEGER REFERENCES forecast_runs(id) ON DELETE SET NULL,
    -- the request URL without any API key, or the imported file's path
    request      TEXT
) STRICT;
CREATE INDEX fetch_log_by_location_time ON fetch_log(location_id, attempted_at);
CREATE INDEX fetch_log_by_run ON fetch_log(run_id);

CREATE TABLE hourly_forecasts (
    run_id                    INTEGER NOT NULL REFERENCES forecast_runs(id) ON DELETE CASCADE,
    valid_time                INTEGER NOT NULL,
    temperature_2m            REAL,
    relative_humidity_2m      REAL,
    dew_point_2m              REAL,
    apparent_temperature      REAL,
    precipitation_probability REAL,
    precipitation             REAL,
    weather_code              REAL,
    cloud_cover               REAL,
    pressure_msl              REAL,
    wind_speed_10m            REAL,
    wind_direction_10m        REAL,
    wind_gusts_10m            REAL,
    PRIMARY KEY (run_id, valid_time)
) STRICT, WITHOUT ROWID;

-- Daily rows are keyed by the local date under the response's fixed UTC offset.
CREATE TABLE daily_forecasts (
    run_id                        INTEGER NOT NULL REFERENCES forecast_runs(id) ON DELETE CASCADE,
    date                          TEXT    NOT NULL,
    weather_code                  REAL,
    temperature_2m_max            REAL,
    temperature_2m_min            REAL,
    precipitation_sum             REAL,
    precipitation_probability_max REAL,
    wind_speed_10m_max            REAL,
    sunrise                       INTEGER,
    sunset                        INTEGER,
    PRIMARY KEY (run_id, date)
) STRICT, WITHOUT ROWID;

-- What happened. source: 'current' (a fetch's current block), 'analysis' (past hours of a
-- forecast response), 'era5' (historical weather API), or a station CSV's name.
CREATE TABLE observations (
    location_id               INTEGER NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
    source                    TEXT    NOT NULL,
    time                      INTEGER NOT NULL,
    temperature_2m            REAL,
    relative_humidity_2m      REAL,
    dew_point_2m              REAL,
    apparent_temperature      REAL,
    precipitation_probability REAL,
    precipitation             REAL,
    weather_code              REAL,
    cloud_cover               REAL,
    pressure_msl              REAL,
    wind_speed_10m            REAL,
    wind_direction_10m        REAL,
    wind_gusts_10m            REAL,
    recorded_at               INTEGER NOT NULL,
    -- (location, time) first: pairing looks up the observation at a forecast's valid time.
    PRIMARY KEY (location_id, time, source)
) STRICT, WITHOUT ROWID;
