UPDATE destination_lease SET holder = NULL, expires_at = '-infinity'
WHERE destination = @destination AND slot = @slot AND holder = @holder
