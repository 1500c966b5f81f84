UPDATE destination_resource SET busy = @busy, updated_at = now()
WHERE destination = @destination AND source = @source AND resource_key = @resource_key
