-- Closes processed deliveries in one statement: records each one's outcome
-- on its inbox row and completes its River job, as River's JobCompleteTx
-- does (state and finalized_at; nothing else changes on completion), but
-- only while the job is still running under the attempt this run holds.
-- River rescues a job it takes for stuck and may be running it again, or
-- have completed it: a job not returned here is no longer this run's, and
-- the caller rolls the whole transaction back. The UPDATE locks each job
-- row and, should another transaction hold it, re-checks the row once that
-- one ends.
--
-- processed_at is the statement's time, just before the commit, not the
-- transaction's start: a run that failed decides by it whether another run
-- processed the row after it began (inbox_mark_error.sql).
--
-- The caller runs it planned for its arguments each time, not as a cached
-- generic plan: a generic plan made while river_job and inbox were small
-- joins them by scanning the whole table, and stays cached as they grow
-- (bench/README.md, "Stop 26").
WITH completed AS (
    UPDATE river_job AS j
    SET state = 'completed', finalized_at = @finalized_at
    FROM unnest(@job_ids::bigint[], @attempts::int[]) AS k (id, attempt)
    WHERE j.id = k.id AND j.state = 'running' AND j.attempt = k.attempt
    RETURNING j.id
), marked AS (
    UPDATE inbox AS i
    SET status = u.status, resource_key = u.resource_key, stale = u.stale, processed_at = clock_timestamp(), last_error = NULL
    FROM unnest(@ids::bigint[], @statuses::text[], @resource_keys::text[], @stales::bool[]) AS u (id, status, resource_key, stale)
    WHERE i.id = u.id
)
SELECT id FROM completed
