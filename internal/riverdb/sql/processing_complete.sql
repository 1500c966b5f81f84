-- Closes processed deliveries in one statement: records each one's outcome
-- (its inbox_pending row, if still there, becomes an inbox_outcome row; a
-- replay's outcome replaces the one before) and completes its River job, as
-- River's JobCompleteTx does (state and finalized_at; nothing else changes
-- on completion), but only while the job is still running under the
-- attempt this run holds. River rescues a job it takes for stuck and may be
-- running it again, or have completed it: a job not returned here is no
-- longer this run's, and the caller rolls the whole transaction back. The
-- UPDATE locks each job row and, should another transaction hold it,
-- re-checks the row once that one ends. The inbox row itself is never
-- written (migrations/016_inbox_state_tables.up.sql).
--
-- processed_at is the statement's time, just before the commit, not the
-- transaction's start: a run that failed decides by it whether another run
-- processed the row after it began (inbox_mark_error.sql).
--
-- The caller runs it planned for its arguments each time, not as a cached
-- generic plan: a generic plan made while river_job and inbox were small
-- joins them by scanning the whole table, and stays cached as they grow
-- (bench/README.md).
WITH completed AS (
    UPDATE river_job AS j
    SET state = 'completed', finalized_at = @finalized_at
    FROM unnest(@job_ids::bigint[], @attempts::int[]) AS k (id, attempt)
    WHERE j.id = k.id AND j.state = 'running' AND j.attempt = k.attempt
    RETURNING j.id
), decided AS (
    DELETE FROM inbox_pending AS p
    USING unnest(@ids::bigint[]) AS u (id)
    WHERE p.inbox_id = u.id
), marked AS (
    INSERT INTO inbox_outcome AS o (inbox_id, source, event_type, received_at, status, processed_at, resource_key, stale)
    SELECT DISTINCT ON (u.id) u.id, i.source, i.event_type, i.received_at, u.status, clock_timestamp(), u.resource_key, u.stale
    FROM unnest(@ids::bigint[], @statuses::text[], @resource_keys::text[], @stales::bool[])
        WITH ORDINALITY AS u (id, status, resource_key, stale, n)
    JOIN inbox i ON i.id = u.id
    -- A delivery twice in the batch (a replay beside its run): the later
    -- one's outcome, as two updates in turn would leave it; ON CONFLICT
    -- may not touch a row twice.
    ORDER BY u.id, u.n DESC
    ON CONFLICT (inbox_id) DO UPDATE
    SET status = excluded.status, processed_at = excluded.processed_at, resource_key = excluded.resource_key,
        stale = excluded.stale, last_error = NULL
)
SELECT id FROM completed
