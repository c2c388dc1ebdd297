-- Ensemble sums kept at write time (issue 31): verify, compare's headline scores and the report read
-- one row per (location, source, variable, model, local valid day, lead bucket) instead of every
-- member of every run, and prune can delete a run's members while its scores stay.
-- Keyed as verification_summaries (0011): day before lead bucket, so the rows an hour of new
-- observations changes sit together. The columns are Core's EnsembleGroupSums: counts and sums of
-- the ecdf CRPS parts, the fair CRPS, the member variance (plain and (M+1)/M-corrected), the
-- ensemble mean's errors; rank_counts is one little-endian binary64 per rank bin (ties split, so
-- fractional), events per kept precipitation threshold (0.1, 1, 5 mm) n, Σ fair Brier, Σ Brier and
-- ten reliability bins' cases, forecast sums and events, also binary64.
CREATE TABLE ensemble_summaries (
    location_id             INTEGER NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
    source                  TEXT    NOT NULL,
    variable                TEXT    NOT NULL,
    model                   TEXT    NOT NULL,
    valid_from              INTEGER NOT NULL,
    valid_to                INTEGER NOT NULL,
    lead_from_h             INTEGER NOT NULL,
    lead_to_h               INTEGER NOT NULL,
    n                       INTEGER NOT NULL,
    sum_members             INTEGER NOT NULL,
    sum_under               REAL    NOT NULL,
    sum_over                REAL    NOT NULL,
    sum_spread_term         REAL    NOT NULL,
    n_spread                INTEGER NOT NULL,
    sum_fair_crps           REAL    NOT NULL,
    sum_variance            REAL    NOT NULL,
    sum_corrected_variance  REAL    NOT NULL,
    sum_spread_cases_err_sq REAL    NOT NULL,
    sum_mean_err            REAL    NOT NULL,
    sum_mean_abs_err        REAL    NOT NULL,
    sum_mean_err_sq         REAL    NOT NULL,
    rank_left_out           INTEGER NOT NULL,
    rank_counts             BLOB    NOT NULL,
    events                  BLOB    NOT NULL,
    PRIMARY KEY (location_id, source, variable, model, valid_from, lead_from_h)
) STRICT, WITHOUT ROWID;
-- Present while the sums of the ensemble runs stored before this migration are still to be added
-- (wxdb does it in Swift, which knows the locations' time zones, when it next opens the file).
CREATE TABLE ensemble_sums_pending (id INTEGER PRIMARY KEY CHECK (id = 1)) STRICT;
INSERT INTO ensemble_sums_pending (id) VALUES (1);
