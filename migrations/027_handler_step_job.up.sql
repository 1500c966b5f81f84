-- A handler step by its job: retention's check of a partition it is about
-- to drop, which runs while the inbox is locked, finds the steps of the
-- unfinished jobs through it (internal/riverdb/sql/partition_busy.sql). Building it
-- reads handler_step while holding its writes (each step a handler
-- enqueues once); with many steps kept (a month of them by default),
-- `hookinbox migrate --prepare` builds it beforehand, CONCURRENTLY
-- (ahead/027_handler_step_job_idx.sql), and this migration finds it there.
CREATE INDEX IF NOT EXISTS handler_step_job_idx ON handler_step (job_id) WHERE job_id IS NOT NULL;
