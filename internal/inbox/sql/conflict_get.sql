-- One conflicting delivery and the stored one, whose payload is read up
-- to @cap bytes: the diff compares what the conflict record keeps.
SELECT c.id, c.source, c.delivery_id, c.received_at, c.payload_sha256, c.headers, c.body, c.body_size,
       i.id, i.received_at, i.payload_sha256, substring(i.payload FROM 1 FOR @cap), octet_length(i.payload)
FROM delivery_conflict c
LEFT JOIN inbox_key k ON k.source = c.source AND k.delivery_id = c.delivery_id
LEFT JOIN inbox i ON i.id = k.inbox_id
WHERE c.id = @id
