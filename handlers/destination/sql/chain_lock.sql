SELECT busy FROM destination_resource
WHERE destination = @destination AND source = @source AND resource_key = @resource_key
FOR UPDATE
