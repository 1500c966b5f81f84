-- migrations/027_handler_step_job.up.sql: handler steps by their job,
-- built without holding the steps' writes.
CREATE INDEX CONCURRENTLY IF NOT EXISTS handler_step_job_idx ON handler_step (job_id) WHERE job_id IS NOT NULL
