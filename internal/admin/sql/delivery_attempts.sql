-- The delivery's processing jobs (the original and every replay), with
-- River's own record of each attempt's error.
SELECT j.id, j.state::text, j.attempt, j.max_attempts, j.errors, j.created_at, j.finalized_at,
       r.id AS replay_id
FROM river_job j
LEFT JOIN replay r ON r.job_id = j.id
WHERE j.kind = 'process_delivery' AND (j.args->>'inbox_id')::bigint = @id
ORDER BY j.id
