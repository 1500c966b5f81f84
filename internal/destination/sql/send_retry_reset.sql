-- Failed sends an operator asks to send again, oldest first, start over:
-- the same key, a fresh retry schedule and age. An unordered one is due
-- now; an ordered one waits, for the sender to put it in its resource's
-- line (chain_line_up.sql). The sends are locked before they are read
-- again, so two retries of the same sends cannot both take them.
WITH picked AS (
    SELECT id, ordered AND resource_key IS NOT NULL AS lines_up
    FROM destination_send
    WHERE destination = @destination AND state = 'failed' AND finished_at >= @since
    ORDER BY id
    LIMIT @limit
    FOR UPDATE
)
UPDATE destination_send s
SET state = CASE WHEN p.lines_up THEN 'waiting' ELSE 'pending' END,
    next_attempt_at = CASE WHEN p.lines_up THEN s.next_attempt_at ELSE now() END,
    in_line = NOT p.lines_up,
    attempts = 0, created_at = now(), finished_at = NULL
FROM picked p
WHERE s.id = p.id AND s.state = 'failed'
