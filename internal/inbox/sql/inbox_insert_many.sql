-- A batch of deliveries in one statement, each decided as inbox_insert.sql
-- decides one. A key already in a generation of inbox_key (looked up
-- apiece; LIMIT 1 keeps each look-up one index probe a generation, as in
-- inbox_find_many.sql), or in conflict with a concurrent insert (a retry,
-- the same delivery twice in the batch, or a body replayed under a new id
-- where the source dedupes bodies), inserts nothing and returns nothing; the
-- first of a batch's copies is the one stored. Each delivery stored is
-- pending until processing decides it
-- (migrations/016_inbox_state_tables.up.sql): its inbox_pending row is
-- inserted by this same statement.
WITH d AS (
    SELECT DISTINCT ON (source, delivery_id) *
    FROM unnest(@sources::text[], @delivery_ids::text[], @event_types::text[], @occurred_ats::timestamptz[],
                @headers::text[], @payloads::bytea[], @payload_sha256s::bytea[], @origins::text[], @body_keys::bytea[])
        WITH ORDINALITY AS d (source, delivery_id, event_type, occurred_at, headers, payload, payload_sha256, origin, body_key, n)
    ORDER BY source, delivery_id, n
), key AS (
    INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin, body_key)
    SELECT d.source, d.delivery_id, nextval('inbox_id_seq'), d.payload_sha256, d.origin, d.body_key
    FROM (SELECT * FROM d ORDER BY n) AS d
    LEFT JOIN LATERAL (
        (SELECT 1 FROM inbox_key k WHERE k.source = d.source AND k.delivery_id = d.delivery_id LIMIT 1)
        UNION ALL
        (SELECT 1 FROM inbox_key k WHERE d.body_key IS NOT NULL AND k.source = d.source AND k.body_key = d.body_key LIMIT 1)
        LIMIT 1
    ) AS seen (one) ON true
    WHERE seen.one IS NULL
    ON CONFLICT DO NOTHING
    RETURNING source, delivery_id, inbox_id
), stored AS (
    INSERT INTO inbox (id, source, delivery_id, event_type, occurred_at, headers, payload, payload_sha256, origin, body_key)
    SELECT k.inbox_id, d.source, d.delivery_id, d.event_type, d.occurred_at, d.headers::jsonb, d.payload, d.payload_sha256, d.origin, d.body_key
    FROM key k JOIN d ON d.source = k.source AND d.delivery_id = k.delivery_id
    RETURNING id, source, delivery_id, event_type, received_at
), pending AS (
    INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
    SELECT id, source, event_type, received_at FROM stored
)
SELECT id, source, delivery_id FROM stored
