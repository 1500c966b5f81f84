SELECT send_id, attempt, attempted_at, duration_ms, status, error, response, stale, probe
FROM destination_attempt
WHERE send_id = ANY(@send_ids)
ORDER BY send_id, attempt, id
