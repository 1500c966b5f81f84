-- The pace at which a dropped partition's keys are deleted, in keys a
-- second, decided when it is dropped: twice the rate its deliveries came
-- in (jobs/partitions_retire.go, keyPace), so that retiring keys keeps up
-- with any sustained ingest and a slowly filled partition's keys go
-- slowly. A fixed pace of 2,000 a second fell behind an inbox that took
-- more than that around the clock. Ranges dropped before this migration
-- keep that pace.
ALTER TABLE inbox_retired ADD COLUMN IF NOT EXISTS keys_per_second integer NOT NULL DEFAULT 2000;
ALTER TABLE inbox_retired ALTER COLUMN keys_per_second DROP DEFAULT;
