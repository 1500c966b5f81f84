-- A processing batch's jobs as River has them now, locked until the batch
-- commits, in id order (River's own updates lock rows one statement at a
-- time; a deadlock would only fail the batch).
SELECT id, attempt, state::text
FROM river_job
WHERE id = ANY(@ids::bigint[])
ORDER BY id
FOR UPDATE
