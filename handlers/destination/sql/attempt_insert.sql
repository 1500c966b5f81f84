INSERT INTO destination_attempt (send_id, attempt, attempted_at, duration_ms, status, error, response, stale, probe)
VALUES (@send_id, @attempt, @attempted_at, @duration_ms, @status, @error, @response, @stale, @probe)
