-- What a claim took of the shared limits: rate slots up to
-- @next_send_at, and the open circuit's probe.
UPDATE destination_state
SET next_send_at = @next_send_at,
    next_probe_at = CASE WHEN @probe THEN clock_timestamp() + @probe_every::interval ELSE next_probe_at END
WHERE destination = @destination
