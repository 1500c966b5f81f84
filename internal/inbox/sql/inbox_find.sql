-- The stored delivery one whose insert did nothing is a duplicate of: the
-- key of its id, else, where the source dedupes bodies, the key of its
-- body (by_body). The second lookup runs only when the first finds
-- nothing.
(SELECT inbox_id, payload_sha256, origin, delivery_id, false AS by_body
 FROM inbox_key
 WHERE source = @source AND delivery_id = @delivery_id)
UNION ALL
(SELECT inbox_id, payload_sha256, origin, delivery_id, true
 FROM inbox_key
 WHERE @body_key::bytea IS NOT NULL AND source = @source AND body_key = @body_key::bytea)
LIMIT 1
