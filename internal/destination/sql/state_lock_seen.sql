-- Whether a running process said lately that it has the destination,
-- under the state row's lock (a sender saying so next waits for it).
SELECT seen_at > now() - @live_secs::float8 * interval '1 second' FROM destination_state WHERE destination = @destination FOR UPDATE
