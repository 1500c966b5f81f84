-- The next send waiting for its turn on one (destination, resource): the
-- first enqueued.
SELECT id, destination FROM destination_send
WHERE destination = @destination AND source = @source AND resource_key = @resource_key AND state = 'waiting'
ORDER BY id
LIMIT 1
