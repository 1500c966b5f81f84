-- The rate limit across replicas: each request takes the next free slot,
-- 1/rate apart, at most @max_lead::interval ahead of now. Returns how long to wait
-- for the slot taken; no row when every slot that near is taken.
UPDATE destination_state
SET next_send_at = greatest(next_send_at, clock_timestamp()) + @interval::interval
WHERE destination = @destination AND next_send_at <= clock_timestamp() + @max_lead::interval
RETURNING greatest(extract(epoch FROM (next_send_at - @interval::interval - clock_timestamp())), 0)::float8
