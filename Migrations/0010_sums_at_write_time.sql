-- verification_summaries now holds the partial sums of every pair, kept current as runs and
-- observations are stored (not only what prune folded in), so `query verify` reads one row per
-- (location, model, source, variable, lead bucket, local day) instead of every pair.
--
-- A day is keyed by the instant it starts (valid_from), no longer by its date text: after
-- 'locations set --timezone' the pairs move to the new zone's days, and the same date in two zones
-- covers other hours (they must not add up into one row). Columns added: the persistence
-- reference's sums (the skill score: pairs that have a reference, the forecast's and persistence's
-- sums of squared errors over them; NULL on rows prune wrote before, which never kept them) and the
-- first and last valid hour among a row's pairs.
CREATE TABLE verification_summaries_0010 (
    location_id             INTEGER NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
    model                   TEXT    NOT NULL,
    source                  TEXT    NOT NULL,
    variable                TEXT    NOT NULL,
    lead_from_h             INTEGER NOT NULL,
    lead_to_h               INTEGER NOT NULL,
    valid_date              TEXT    NOT NULL,
    n                       INTEGER NOT NULL,
    sum_f                   REAL    NOT NULL,
    sum_o                   REAL    NOT NULL,
    sum_ff                  REAL    NOT NULL,
    sum_oo                  REAL    NOT NULL,
    sum_fo                  REAL    NOT NULL,
    sum_abs_err             REAL    NOT NULL,
    sum_err                 REAL    NOT NULL,
    sum_err_sq              REAL    NOT NULL,
    hits                    INTEGER,
    false_alarms            INTEGER,
    misses                  INTEGER,
    correct_negatives       INTEGER,
    brier_n                 INTEGER,
    brier_sum               REAL,
    brier_events            INTEGER,
    valid_from              INTEGER NOT NULL,
    valid_to                INTEGER NOT NULL,
    persistence_n           INTEGER,
    forecast_sum_err_sq_ref REAL,
    persistence_sum_err_sq  REAL,
    first_valid_time        INTEGER,
    last_valid_time         INTEGER,
    PRIMARY KEY (location_id, source, variable, model, lead_from_h, valid_from)
) STRICT, WITHOUT ROWID;
INSERT INTO verification_summaries_0010 (location_id, model, source, variable, lead_from_h, lead_to_h, valid_date,
    n, sum_f, sum_o, sum_ff, sum_oo, sum_fo, sum_abs_err, sum_err, sum_err_sq, hits, false_alarms, misses,
    correct_negatives, brier_n, brier_sum, brier_events, valid_from, valid_to, first_valid_time, last_valid_time)
SELECT location_id, model, source, variable, lead_from_h, lead_to_h, valid_date,
    n, sum_f, sum_o, sum_ff, sum_oo, sum_fo, sum_abs_err, sum_err, sum_err_sq, hits, false_alarms, misses,
    correct_negatives, brier_n, brier_sum, brier_events, valid_from, valid_to, valid_from, valid_to - 3600
FROM verification_summaries WHERE valid_from IS NOT NULL;
-- Rows prune wrote before migration 0006 have no span yet: their day is the date in the location's
-- zone, which only Swift knows. They wait here until wxdb moves them in (Store.rebuildPendingSums).
CREATE TABLE verification_summaries_unpinned AS SELECT * FROM verification_summaries WHERE valid_from IS NULL;
DROP TABLE verification_summaries;
ALTER TABLE verification_summaries_0010 RENAME TO verification_summaries;
-- Present while the sums of the rows already stored still have to be added (wxdb does it in Swift,
-- which knows the locations' time zones, right after migrating; see Store.rebuildPendingSums).
CREATE TABLE verification_sums_pending (id INTEGER PRIMARY KEY CHECK (id = 1)) STRICT;
INSERT INTO verification_sums_pending (id) VALUES (1);
