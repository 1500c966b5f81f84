-- The unique constraints decide duplicates: a concurrent insert of the same
-- (source, delivery_id), or of the same (source, body_key) where the source
-- dedupes bodies (migration 020), waits for the first transaction and then
-- does nothing.
-- A delivery stored is pending until processing decides it
-- (migrations/016_inbox_state_tables.up.sql): its inbox_pending row is
-- inserted by this same statement.
WITH stored AS (
    INSERT INTO inbox (source, delivery_id, event_type, occurred_at, headers, payload, payload_sha256, origin, body_key)
    VALUES (@source, @delivery_id, @event_type, @occurred_at, @headers, @payload, @payload_sha256, @origin, @body_key)
    ON CONFLICT DO NOTHING
    RETURNING id, source, event_type, received_at
), pending AS (
    INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
    SELECT id, source, event_type, received_at FROM stored
)
SELECT id FROM stored
