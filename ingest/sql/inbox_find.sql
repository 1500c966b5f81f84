-- The stored row a delivery whose insert did nothing is a duplicate of:
-- the one with its id, else, where the source dedupes bodies, the one with
-- its body (by_body). The second lookup runs only when the first finds
-- nothing.
(SELECT id, payload_sha256, origin, delivery_id, false AS by_body
 FROM inbox
 WHERE source = @source AND delivery_id = @delivery_id)
UNION ALL
(SELECT id, payload_sha256, origin, delivery_id, true
 FROM inbox
 WHERE @body_key::bytea IS NOT NULL AND source = @source AND body_key = @body_key::bytea)
LIMIT 1
