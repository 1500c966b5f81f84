SELECT id, payload_sha256
FROM inbox
WHERE source = @source AND delivery_id = @delivery_id
