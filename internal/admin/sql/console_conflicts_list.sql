-- Conflicting deliveries, newest first, keyset-paginated on id, with the
-- stored delivery they conflict with (none once retention deleted it).
SELECT c.id, c.source, c.delivery_id, i.id, c.received_at, c.payload_sha256, c.body_size, i.payload_sha256
FROM delivery_conflict c
LEFT JOIN inbox i ON i.source = c.source AND i.delivery_id = c.delivery_id
WHERE (@cursor::bigint IS NULL OR c.id < @cursor::bigint)
ORDER BY c.id DESC
LIMIT @limit
