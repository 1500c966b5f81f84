-- A successful request resets the failure count and closes the circuit.
-- Rows already reset are not touched (nor locked): every success of a busy
-- destination comes here. It returns whether the circuit was open, so
-- only then are the sends that waited for it woken.
UPDATE destination_state s
SET consecutive_failures = 0, failing_since = NULL, circuit_open_since = NULL, next_probe_at = NULL
FROM (SELECT destination, circuit_open_since IS NOT NULL AS was_open
      FROM destination_state
      WHERE destination = @destination
        AND (consecutive_failures <> 0 OR failing_since IS NOT NULL OR circuit_open_since IS NOT NULL)
      FOR UPDATE) old
WHERE s.destination = old.destination
RETURNING old.was_open
