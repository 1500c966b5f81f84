-- Failed requests: count them, open the circuit at the threshold. A flush
-- recorded @again counts them only if its last try did not commit: the
-- latest failure's attempt is not there yet (attempts_insert.sql runs
-- after this statement).
UPDATE destination_state
SET consecutive_failures = consecutive_failures + @failures,
    failing_since = coalesce(failing_since, @attempted_at),
    last_error = @last_error,
    last_error_at = @attempted_at,
    next_probe_at = CASE WHEN circuit_open_since IS NULL AND consecutive_failures + @failures >= @threshold
                         THEN clock_timestamp() + @probe_every::interval ELSE next_probe_at END,
    circuit_open_since = CASE WHEN circuit_open_since IS NULL AND consecutive_failures + @failures >= @threshold
                         THEN clock_timestamp() ELSE circuit_open_since END
WHERE destination = @destination
  AND (NOT @again::boolean
       OR NOT EXISTS (SELECT 1 FROM destination_attempt
                      WHERE send_id = @send_id AND attempt = @attempt AND attempted_at = @attempted_at))
RETURNING circuit_open_since IS NOT NULL
