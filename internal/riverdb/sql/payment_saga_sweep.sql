-- Sagas still waiting on a step whose job River will never run again: it
-- was cancelled, or discarded after its last attempt, or it is gone
-- (pruned by River, or its step row deleted by retention). The
-- step's worker marks the saga failed itself, but not when its process
-- died on the last attempt (River's rescuer discards the job) or when an
-- operator cancelled the job. These are marked failed at that step, with
-- the job's last error. Rows a step's transaction holds are skipped: that
-- step is deciding them.
WITH stalled AS (
    SELECT s.payment_intent,
           CASE s.state WHEN 'fulfilling' THEN 'fulfill' ELSE 'refund' END AS step,
           CASE WHEN j.id IS NULL THEN 'its job no longer exists'
                ELSE coalesce(j.errors[array_upper(j.errors, 1)]->>'error', 'its job was ' || j.state::text)
           END AS last_error
    FROM payment_saga s
    LEFT JOIN handler_step hs ON hs.key = CASE s.state WHEN 'fulfilling' THEN s.fulfill_key ELSE s.refund_key END
    LEFT JOIN river_job j ON j.id = hs.job_id
    WHERE s.state IN ('fulfilling', 'refunding')
      AND (j.id IS NULL OR j.state IN ('cancelled', 'discarded'))
    FOR UPDATE OF s SKIP LOCKED
)
UPDATE payment_saga s
SET state = 'failed', failed_step = stalled.step, last_error = stalled.last_error, updated_at = now()
FROM stalled
WHERE s.payment_intent = stalled.payment_intent
RETURNING s.payment_intent, s.source, s.delivery_id, s.failed_step, s.last_error
