-- Deliveries still pending (inbox_pending) that River will never run
-- again: no job of theirs (delivery_job_ids, migrations/018) is live, and
-- the last one left, if any, was not cancelled. River's rescuer discards a
-- job whose process died on its last attempt, and River UI deletes jobs;
-- either way a process_deliveries job takes its whole batch with it. A
-- cancelled job is an operator's decision: its deliveries stay received
-- until replayed. River prunes cancelled jobs after a while
-- (retention.river_cancelled), so the statement writes the decision on
-- the pending row, as its last error (@hold_note, with the job's id), and
-- a delivery whose last error says so (@held_like) is held still while no
-- later job of it is left.
--
-- Only deliveries received before @cutoff whose last job, if River still
-- has it, ended before @cutoff: an operator has that long to retry a
-- discarded job in River UI.
--
-- One window of at most @scan pending rows after @after is examined, in id
-- order, so a run costs the same however large the backlog (a drain's
-- every row has a live job, and looking each one's jobs up is a few index
-- probes); the caller moves the window on from run to run. Of the window,
-- at most @batch orphans are returned, their pending rows locked: a
-- concurrent run skips them, and a row processing has just decided
-- (deleted) is not returned. The first two columns are the window's size
-- and last id, on every row, and on a row of their own when no orphan was
-- found.
WITH win AS MATERIALIZED (
    SELECT inbox_id
    FROM inbox_pending
    WHERE inbox_id > @after AND received_at < @cutoff
    ORDER BY inbox_id
    LIMIT @scan
), stats AS (
    SELECT count(*) AS scanned, coalesce(max(inbox_id), 0) AS last_id FROM win
),
-- Each row's jobs are looked up in subqueries of the select list, which
-- run row by row through the indexes: written as joins, the planner (which
-- has no statistics on a job's args: migrations/017) expected hundreds of
-- jobs a delivery and hashed the whole of river_job on every run.
facts AS MATERIALIZED (
    SELECT win.inbox_id,
           EXISTS (SELECT 1
                   FROM delivery_job_ids(win.inbox_id) AS d (job_id)
                   JOIN river_job j ON j.id = d.job_id
                   WHERE j.state IN ('available', 'pending', 'running', 'retryable', 'scheduled')) AS live,
           (SELECT max(d.job_id) FROM delivery_job_ids(win.inbox_id) AS d (job_id)) AS last_job_id
    FROM win
), lost AS MATERIALIZED (
    SELECT f.inbox_id, f.last_job_id,
           (SELECT j.state::text FROM river_job j WHERE j.id = f.last_job_id) AS last_job_state,
           (SELECT j.finalized_at FROM river_job j WHERE j.id = f.last_job_id) AS last_job_finalized_at,
           (SELECT substring(p.last_error FROM '^job ([0-9]+) ')::bigint
            FROM inbox_pending p
            WHERE p.inbox_id = f.inbox_id AND p.last_error LIKE @held_like) AS held_by_job
    FROM facts f
    WHERE NOT f.live
), hold AS (
    UPDATE inbox_pending p
    SET last_error = h.note
    FROM (SELECT inbox_id, format(@hold_note, last_job_id) AS note FROM lost WHERE last_job_state = 'cancelled') h
    WHERE p.inbox_id = h.inbox_id AND p.last_error IS DISTINCT FROM h.note
), orphan AS (
    SELECT p.inbox_id
    FROM inbox_pending p
    WHERE p.inbox_id = ANY (ARRAY(
        SELECT inbox_id FROM lost
        WHERE last_job_state IS DISTINCT FROM 'cancelled'
          AND NOT coalesce(held_by_job > coalesce(last_job_id, 0), false)
          AND (last_job_finalized_at IS NULL OR last_job_finalized_at < @cutoff)))
    ORDER BY p.inbox_id
    LIMIT @batch
    FOR UPDATE SKIP LOCKED
)
SELECT s.scanned, s.last_id, o.inbox_id, l.last_job_id, l.last_job_state
FROM stats s
LEFT JOIN (orphan o JOIN lost l ON l.inbox_id = o.inbox_id) ON true
ORDER BY o.inbox_id
