-- The newest version handlers applied to a resource (resource.go in
-- handlers), for the console's delivery page.
SELECT applied_at, applied_received_at, receipt_applied_at
FROM resource_version
WHERE source = @source AND resource_key = @resource_key
