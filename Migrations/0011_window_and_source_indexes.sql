-- Two lookups that read every row of a location become index ranges.
--
-- Same-run recognition (Store.matchingRun) compares a response only with stored runs whose window
-- starts or ends within a few days of its own; without these indexes it read every run of the
-- location and model to find them (a one-location archive import spent a fifth of its time there).
CREATE INDEX forecast_runs_by_window_start ON forecast_runs(location_id, model, first_valid_time);
CREATE INDEX forecast_runs_by_window_end ON forecast_runs(location_id, model, last_valid_time);

-- The observation sources of a location and their hour counts (the default source's ranking, read
-- by every query) come from this narrow index instead of every observation row.
CREATE INDEX observations_by_source ON observations(location_id, source, time);
