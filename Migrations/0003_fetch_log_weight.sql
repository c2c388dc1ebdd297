-- The share of Open-Meteo's weighted call count each fetch-log row stands for, so wxdb can add
-- up what it used in the current minute, hour and day and stay inside the free API's limits.
ALTER TABLE fetch_log ADD COLUMN api_weight REAL;
CREATE INDEX fetch_log_by_time ON fetch_log(attempted_at);
