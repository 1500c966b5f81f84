-- A batch of deliveries in one statement. The unique constraints still
-- decide each row: conflicts (a retry, the same delivery twice in the
-- batch, or a body replayed under a new id where the source dedupes bodies)
-- insert nothing and return nothing. Each delivery stored is pending
-- until processing decides it (migrations/016_inbox_state_tables.up.sql):
-- its inbox_pending row is inserted by this same statement.
WITH stored AS (
    INSERT INTO inbox (source, delivery_id, event_type, occurred_at, headers, payload, payload_sha256, origin, body_key)
    SELECT source, delivery_id, event_type, occurred_at, headers::jsonb, payload, payload_sha256, origin, body_key
    FROM unnest(@sources::text[], @delivery_ids::text[], @event_types::text[], @occurred_ats::timestamptz[],
                @headers::text[], @payloads::bytea[], @payload_sha256s::bytea[], @origins::text[], @body_keys::bytea[])
        AS d (source, delivery_id, event_type, occurred_at, headers, payload, payload_sha256, origin, body_key)
    ON CONFLICT DO NOTHING
    RETURNING id, source, delivery_id, event_type, received_at
), pending AS (
    INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
    SELECT id, source, event_type, received_at FROM stored
)
SELECT id, source, delivery_id FROM stored
