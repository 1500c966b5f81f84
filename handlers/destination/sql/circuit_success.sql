-- A successful request closes the circuit. Rows already closed are not
-- touched (nor locked): every success of a busy destination comes here.
UPDATE destination_state
SET consecutive_failures = 0, failing_since = NULL, circuit_open_since = NULL, next_probe_at = NULL
WHERE destination = @destination
  AND (consecutive_failures <> 0 OR failing_since IS NOT NULL OR circuit_open_since IS NOT NULL)
RETURNING true
