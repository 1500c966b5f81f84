-- The stored rows of a batch's deliveries, read right after its insert in
-- the same round trip: rows committed before (duplicates) and the batch's
-- own new ones, which the caller tells apart by the insert's RETURNING.
-- LIMIT 1 (the constraint allows one row anyway) keeps it one unique-index
-- lookup per delivery: without it PostgreSQL flattens the LATERAL into a
-- plain join, which on a small inbox plans as a hash join over a scan of
-- the whole table. A cached generic plan made then keeps scanning as the
-- inbox grows: 5 ms a call for 19 keys in the steady benchmark, 0.1 ms
-- with the lookups (bench/README.md, "Stop 25").
SELECT i.id, i.source, i.delivery_id, i.payload_sha256, i.origin
FROM unnest(@sources::text[], @delivery_ids::text[]) AS k (source, delivery_id)
CROSS JOIN LATERAL (
    SELECT id, source, delivery_id, payload_sha256, origin
    FROM inbox
    WHERE inbox.source = k.source AND inbox.delivery_id = k.delivery_id
    LIMIT 1
) AS i
