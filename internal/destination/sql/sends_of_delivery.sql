SELECT id, destination, key, state, stale, attempts, last_status, last_error,
       CASE WHEN state = 'pending' THEN next_attempt_at END, created_at, finished_at
FROM destination_send
WHERE source = @source AND delivery_id = @delivery_id
ORDER BY id
