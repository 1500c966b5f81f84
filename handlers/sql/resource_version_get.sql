SELECT applied_at, applied_received_at, receipt_applied_at FROM resource_version
WHERE source = @source AND resource_key = @resource_key
