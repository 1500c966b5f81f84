SELECT sent_at, sent_received_at, receipt_sent_at FROM destination_resource
WHERE destination = @destination AND source = @source AND resource_key = @resource_key
