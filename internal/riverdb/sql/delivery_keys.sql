-- The downstream keys the delivery's handlers derived, and their jobs.
SELECT s.handler, s.step, s.key, s.job_id, j.state::text, s.created_at
FROM handler_step s
LEFT JOIN river_job j ON j.id = s.job_id
WHERE s.source = @source AND s.delivery_id = @delivery_id
ORDER BY s.created_at, s.key
