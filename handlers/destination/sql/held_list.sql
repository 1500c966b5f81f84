SELECT id FROM destination_send WHERE destination = @destination AND state = 'held' ORDER BY id
