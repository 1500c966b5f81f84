-- River creates two GIN indexes on river_job, over args and over metadata,
-- for its JobList metadata filter. hookinbox never searches jobs that way
-- (a delivery's jobs are found by river_job_process_delivery_inbox_idx),
-- yet they were the largest write cost of a delivery: River writes a job's
-- row three times (inserted, fetched, completed), no update is HOT (state
-- is indexed), so every version adds GIN entries, and a full pending list
-- is merged by whichever insert fills it, in the middle of an ack. In the
-- steady benchmark at 1,000 deliveries/s on one default serve (2 cores),
-- dropping them took PostgreSQL's CPU per delivery from 0.92 to 0.65–0.68
-- ms, River's job insert from 1.15 to 0.30 ms a statement, and ack p99
-- from 124–129 ms to 37–60 ms (bench/README.md).
--
-- River's reindexer is told not to rebuild them (jobs.NewClient). A River
-- JobList with a metadata filter still works, by scanning. Should a later
-- River migration need them, recreate them first:
--   CREATE INDEX CONCURRENTLY river_job_args_index ON river_job USING GIN (args);
--   CREATE INDEX CONCURRENTLY river_job_metadata_index ON river_job USING GIN (metadata);
DROP INDEX IF EXISTS river_job_args_index;
DROP INDEX IF EXISTS river_job_metadata_index;
