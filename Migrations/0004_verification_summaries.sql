-- What `wxdb prune` keeps of the runs whose hourly rows it removes: the partial sums of each
-- (location, model, observation source, variable, lead bucket, valid day in the location's time
-- zone), so `query verify`
-- over a pruned period gives the same n, bias, MAE, RMSE and correlation as before.
-- Sums are in stored (metric) units. For precipitation the 2x2 counts, and for
-- precipitation_probability the Brier sums, are at the default 0.1 mm threshold.
CREATE TABLE verification_summaries (
    location_id        INTEGER NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
    model              TEXT    NOT NULL,
    source             TEXT    NOT NULL,
    variable           TEXT    NOT NULL,
    lead_from_h        INTEGER NOT NULL,
    lead_to_h          INTEGER NOT NULL,
    valid_date         TEXT    NOT NULL,
    n                  INTEGER NOT NULL,
    sum_f              REAL    NOT NULL,
    sum_o              REAL    NOT NULL,
    sum_ff             REAL    NOT NULL,
    sum_oo             REAL    NOT NULL,
    sum_fo             REAL    NOT NULL,
    sum_abs_err        REAL    NOT NULL,
    sum_err            REAL    NOT NULL,
    sum_err_sq         REAL    NOT NULL,
    hits               INTEGER,
    false_alarms       INTEGER,
    misses             INTEGER,
    correct_negatives  INTEGER,
    brier_n            INTEGER,
    brier_sum          REAL,
    brier_events       INTEGER,
    PRIMARY KEY (location_id, source, variable, model, lead_from_h, valid_date)
) STRICT, WITHOUT ROWID;

-- When a run's hourly and daily rows were folded into verification_summaries and removed.
ALTER TABLE forecast_runs ADD COLUMN pruned_at INTEGER;
