-- Every content hash a run has had: its first response's and each later response recognised as
-- the same model run (a moved window, another UTC offset, an older copy), so re-fetching or
-- re-importing any response already seen is recognised at once, even after `wxdb prune` removed
-- the run's rows and with them the hours a comparison would need.
CREATE TABLE run_content_hashes (
    location_id  INTEGER NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
    model        TEXT    NOT NULL,
    content_hash INTEGER NOT NULL,
    run_id       INTEGER NOT NULL REFERENCES forecast_runs(id) ON DELETE CASCADE,
    PRIMARY KEY (location_id, model, content_hash, run_id)
) STRICT, WITHOUT ROWID;
-- Deleting a run (locations remove --purge) finds its hashes without a scan.
CREATE INDEX run_content_hashes_by_run ON run_content_hashes(run_id);

INSERT OR IGNORE INTO run_content_hashes (location_id, model, content_hash, run_id)
SELECT location_id, model, content_hash, id FROM forecast_runs;
