-- One slice of a resumed destination's held sends, oldest first, locked so
-- two resume jobs never take the same ones.
SELECT id FROM destination_send
WHERE destination = @destination AND state = 'held'
ORDER BY id
LIMIT @limit
FOR UPDATE SKIP LOCKED
