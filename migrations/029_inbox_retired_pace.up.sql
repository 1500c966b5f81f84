-- The pace at which a dropped partition's keys are deleted, in keys a
-- second, decided when it is dropped: twice the rate its deliveries came
-- in (keyPace, until migration 032 dropped keys by generation), so that
-- retiring keys keeps up with any sustained ingest and a slowly filled
-- partition's keys go slowly. A fixed pace of 2,000 a second fell behind
-- an inbox that took more than that around the clock. The default is that old pace: ranges
-- dropped before this migration keep it, and so do the drops of an older
-- replica during a rolling deploy, which name no pace.
ALTER TABLE inbox_retired ADD COLUMN IF NOT EXISTS keys_per_second integer NOT NULL DEFAULT 2000;
