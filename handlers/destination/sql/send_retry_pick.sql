-- Failed sends an operator asks to send again, oldest first, locked so
-- two retries of the same sends cannot both take them.
SELECT id, source, delivery_id, ordered, resource_key
FROM destination_send
WHERE destination = @destination AND state = 'failed' AND finished_at >= @since
ORDER BY id
LIMIT @limit
FOR UPDATE
