-- The stored keys of a batch's deliveries (inbox_key), read right after its insert in
-- the same round trip: rows committed before (duplicates) and the batch's
-- own new ones, which the caller tells apart by the insert's RETURNING.
-- LIMIT 1 (the constraint allows one row anyway) keeps it one unique-index
-- lookup per delivery: without it PostgreSQL flattens the LATERAL into a
-- plain join, which on a small inbox plans as a hash join over a scan of
-- the whole table. A cached generic plan made then keeps scanning as the
-- inbox grows: 5 ms a call for 19 keys in the steady benchmark, 0.1 ms
-- with the lookups (bench/README.md).
-- Where the source dedupes bodies, a delivery with no row of its id is
-- looked up by its body_key too (only then: the Append stops at the first
-- branch's row): its duplicate is the row that body came in first.
SELECT i.inbox_id, k.source, k.delivery_id, i.payload_sha256, i.origin, i.delivery_id
FROM unnest(@sources::text[], @delivery_ids::text[], @body_keys::bytea[]) AS k (source, delivery_id, body_key)
CROSS JOIN LATERAL (
    (SELECT inbox_id, delivery_id, payload_sha256, origin
     FROM inbox_key
     WHERE inbox_key.source = k.source AND inbox_key.delivery_id = k.delivery_id
     LIMIT 1)
    UNION ALL
    (SELECT inbox_id, delivery_id, payload_sha256, origin
     FROM inbox_key
     WHERE k.body_key IS NOT NULL AND inbox_key.source = k.source AND inbox_key.body_key = k.body_key
     LIMIT 1)
    LIMIT 1
) AS i
