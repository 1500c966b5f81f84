-- The destination's requests in flight, on every replica: its live claims.
SELECT count(*) FROM destination_send
WHERE destination = @destination AND claimed_until > clock_timestamp()
