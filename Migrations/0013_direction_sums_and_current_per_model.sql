-- Issue #25 §4: mean directions. The kept sums held Σf and Σo of wind directions, whose quotient is
-- no mean direction (350° and 10° average to 180°), so verify showed no mean forecast or observed
-- direction. Each summary group of a direction now also keeps Σsin and Σcos of the forecast and
-- observed angles (the circular mean is atan2 of the mean sine and cosine), and `direction_n`, the
-- pairs they hold.
--
-- Existing groups are filled from their stored pairs right after migrating (Store.finishMigration0013,
-- one location per transaction, resumable). Pairs already pruned cannot be summed again: such a group
-- keeps direction_n below n and shows no mean direction, while its bias, MAE and RMSE stay as they were.
ALTER TABLE verification_summaries ADD COLUMN direction_n INTEGER;
ALTER TABLE verification_summaries ADD COLUMN sum_sin_f REAL;
ALTER TABLE verification_summaries ADD COLUMN sum_cos_f REAL;
ALTER TABLE verification_summaries ADD COLUMN sum_sin_o REAL;
ALTER TABLE verification_summaries ADD COLUMN sum_cos_o REAL;

CREATE TABLE migration_0013_pending (location_id INTEGER PRIMARY KEY) STRICT;
INSERT OR IGNORE INTO migration_0013_pending (location_id)
    SELECT DISTINCT location_id FROM verification_summaries WHERE variable = 'wind_direction_10m';

