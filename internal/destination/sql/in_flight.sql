-- The destination's requests in flight, on every replica (its live
-- claims), and how many of them are @instance's.
SELECT count(*), count(*) FILTER (WHERE holder LIKE @instance || '/%')
FROM destination_slot
WHERE destination = @destination AND claimed_until > clock_timestamp()
