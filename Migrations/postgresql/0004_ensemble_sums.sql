-- The PostgreSQL schema brought level with SQLite's migration 0015 (issue #31): the ensemble sums
-- kept at write time, one row per (location, source, variable, model, local valid day, lead
-- bucket), so verify reads days, not members, and prune can delete a run's members while its
-- scores stay. The columns are Core's EnsembleGroupSums, as in SQLite: counts and sums of the ecdf
-- CRPS parts, the fair CRPS, the member variance (plain and (M+1)/M-corrected), the ensemble
-- mean's errors; rank_counts is one little-endian binary64 per rank bin (ties split, so
-- fractional), events per kept precipitation threshold (0.1, 1, 5 mm) n, Σ fair Brier, Σ Brier and
-- ten reliability bins' cases, forecast sums and events, also binary64.
--
-- No table of pending work as SQLite's ensemble_sums_pending: the PostgreSQL engine stored no
-- ensemble run before this migration, so there are no older runs whose sums are to be added.
-- location_id leads the key, and the table is distributed and colocated as 0002's ensemble tables.

-- As 0002: one connection per worker for this migration's DDL on Citus (a placeholder elsewhere).
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

CREATE TABLE ensemble_summaries (
    location_id             bigint           NOT NULL,
    source                  text             NOT NULL,
    variable                text             NOT NULL,
    model                   text             NOT NULL,
    valid_from              bigint           NOT NULL,
    valid_to                bigint           NOT NULL,
    lead_from_h             bigint           NOT NULL,
    lead_to_h               bigint           NOT NULL,
    n                       bigint           NOT NULL,
    sum_members             bigint           NOT NULL,
    sum_under               double precision NOT NULL,
    sum_over                double precision NOT NULL,
    sum_spread_term         double precision NOT NULL,
    n_spread                bigint           NOT NULL,
    sum_fair_crps           double precision NOT NULL,
    sum_variance            double precision NOT NULL,
    sum_corrected_variance  double precision NOT NULL,
    sum_spread_cases_err_sq double precision NOT NULL,
    sum_mean_err            double precision NOT NULL,
    sum_mean_abs_err        double precision NOT NULL,
    sum_mean_err_sq         double precision NOT NULL,
    rank_left_out           bigint           NOT NULL,
    rank_counts             bytea            NOT NULL,
    events                  bytea            NOT NULL,
    PRIMARY KEY (location_id, source, variable, model, valid_from, lead_from_h)
);

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
        PERFORM create_distributed_table('ensemble_summaries', 'location_id', colocate_with => 'location_counters');
    END IF;
END
$$;

ALTER TABLE ensemble_summaries ADD FOREIGN KEY (location_id) REFERENCES locations (id) ON DELETE CASCADE;
