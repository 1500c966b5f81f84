-- A sender about to claim: the destination's shared state, locked so the
-- claims of every replica are counted one after another (max_in_flight,
-- rate_limit and the circuit's probe hold across replicas).
SELECT paused, circuit_open_since IS NOT NULL, next_probe_at,
       CASE WHEN next_send_at = '-infinity' THEN NULL ELSE next_send_at END, clock_timestamp(),
       CASE WHEN wanted_until > clock_timestamp() THEN wanted_by END
FROM destination_state
WHERE destination = @destination
FOR UPDATE
