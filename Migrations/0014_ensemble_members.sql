-- Ensemble runs (issue 31): every member of a run of an Open-Meteo ensemble model, kept compactly.
-- One row per distinct ensemble forecast of a location and model: fetching the same content again
-- adds a fetch_log row, not a run (content_hash), as forecast_runs does for deterministic models.
CREATE TABLE ensemble_runs (
    id                INTEGER PRIMARY KEY,
    location_id       INTEGER NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
    model             TEXT    NOT NULL,
    -- the model initialisation time: given (issued_at_source = 'model_run') or, where no source
    -- tells it, the latest run on the model's cadence before the first fetch ('cadence')
    issued_at         INTEGER NOT NULL,
    issued_at_source  TEXT    NOT NULL CHECK (issued_at_source IN ('model_run', 'cadence')),
    fetched_at        INTEGER NOT NULL,
    grid_latitude     REAL    NOT NULL,
    grid_longitude    REAL    NOT NULL,
    grid_elevation    REAL,
    first_valid_time  INTEGER NOT NULL,
    hour_count        INTEGER NOT NULL CHECK (hour_count > 0),
    member_count      INTEGER NOT NULL CHECK (member_count > 0),
    content_hash      INTEGER NOT NULL,
    UNIQUE (location_id, model, content_hash)
) STRICT;
CREATE INDEX ensemble_runs_by_issue ON ensemble_runs (location_id, model, issued_at);
-- One run's members of one variable: hour_count × member_count little-endian IEEE 754 binary32,
-- hour-major (every member of the first valid hour, then the next hour's), NaN where a member has
-- no value: 4 bytes per member value (plain SQL sees bytes; wxdb decodes them).
CREATE TABLE ensemble_values (
    run_id    INTEGER NOT NULL REFERENCES ensemble_runs(id) ON DELETE CASCADE,
    variable  TEXT    NOT NULL,
    members   BLOB    NOT NULL,
    PRIMARY KEY (run_id, variable)
) STRICT;
