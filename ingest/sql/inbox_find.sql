SELECT id, payload_sha256, origin
FROM inbox
WHERE source = @source AND delivery_id = @delivery_id
