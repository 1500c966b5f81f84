SELECT id, destination, key, state, stale, attempts, last_status, last_error, job_id, created_at, finished_at
FROM destination_send
WHERE source = @source AND delivery_id = @delivery_id
ORDER BY id
