-- The instants each verification summary's day covered when prune wrote it ([valid_from, valid_to)),
-- so a summary keeps meaning the same hours after its location's time zone changes. Rows written
-- before this migration have NULL here until 'locations set --timezone' fills them from the old zone;
-- until then their day is read in the location's zone, as before.
ALTER TABLE verification_summaries ADD COLUMN valid_from INTEGER;
ALTER TABLE verification_summaries ADD COLUMN valid_to INTEGER;
