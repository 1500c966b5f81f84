-- The unique constraints of inbox_key decide duplicates: a concurrent
-- insert of the same (source, delivery_id), or of the same (source,
-- body_key) where the source dedupes bodies (migration 020), waits for the
-- first transaction and then does nothing, and so does everything after
-- it: the inbox row is inserted only for a key that was new. The keys
-- live apart from the partitioned inbox, whose unique constraints could
-- not span its partitions (migrations/026_inbox_partitions.up.sql).
-- A delivery stored is pending until processing decides it
-- (migrations/016_inbox_state_tables.up.sql): its inbox_pending row is
-- inserted by this same statement.
WITH key AS (
    INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin, body_key)
    VALUES (@source, @delivery_id, nextval('inbox_id_seq'), @payload_sha256, @origin, @body_key)
    ON CONFLICT DO NOTHING
    RETURNING inbox_id
), stored AS (
    INSERT INTO inbox (id, source, delivery_id, event_type, occurred_at, headers, payload, payload_sha256, origin, body_key)
    SELECT inbox_id, @source, @delivery_id, @event_type, @occurred_at, @headers, @payload, @payload_sha256, @origin, @body_key
    FROM key
    RETURNING id, source, event_type, received_at
), pending AS (
    INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
    SELECT id, source, event_type, received_at FROM stored
)
SELECT id FROM stored
