-- The delivery's processing jobs (the batch job that held it, the original
-- and every replay: delivery_job_ids in migrations/018), with River's own
-- record of each attempt's error. attempts_before: the attempts the batch
-- job that gave it this job made before (jobs.retryFromBatch).
SELECT j.id, j.kind, j.tags, j.state::text, j.attempt, j.max_attempts, j.errors, j.created_at, j.finalized_at,
       r.id AS replay_id, COALESCE((j.metadata->>'attempts_before')::int, 0) AS attempts_before
FROM delivery_job_ids(@id) AS d (job_id)
JOIN river_job j ON j.id = d.job_id
LEFT JOIN replay r ON r.job_id = j.id
ORDER BY j.id
