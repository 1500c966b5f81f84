-- The first id received within @since, through the received_at index of
-- each partition: the ids after it are the traffic of that span.
SELECT id FROM inbox WHERE received_at >= @since ORDER BY received_at LIMIT 1
