-- Conflicting deliveries, newest first, keyset-paginated on id, with the
-- stored delivery they conflict with (none once retention deleted it).
SELECT c.id, c.source, c.delivery_id, k.inbox_id, c.received_at, c.payload_sha256, c.body_size, k.payload_sha256
FROM delivery_conflict c
LEFT JOIN inbox_key k ON k.source = c.source AND k.delivery_id = c.delivery_id
WHERE (@cursor::bigint IS NULL OR c.id < @cursor::bigint)
ORDER BY c.id DESC
LIMIT @limit
