-- A key is new when no generation of inbox_key holds it
-- (migrations/032_inbox_key_generations.up.sql): the look-up finds it in
-- the generations before this one, and the unique constraints of the
-- generation it is inserted into decide between concurrent inserts of the
-- same (source, delivery_id), or of the same (source, body_key) where the
-- source dedupes bodies (migration 020): the second waits for the first
-- transaction and then does nothing, and so does everything after it. The
-- look-up is sound only once the transaction holds the generations' fence
-- (key_fence.sql). The inbox row is inserted only for a key that was new.
-- The keys live apart from the partitioned inbox, whose unique
-- constraints could not span its partitions
-- (migrations/026_inbox_partitions.up.sql).
-- A delivery stored is pending until processing decides it
-- (migrations/016_inbox_state_tables.up.sql): its inbox_pending row is
-- inserted by this same statement.
WITH key AS (
    INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin, body_key)
    SELECT @source::text, @delivery_id::text, nextval('inbox_id_seq'), @payload_sha256::bytea, @origin::text, @body_key::bytea
    WHERE NOT EXISTS (SELECT 1 FROM inbox_key WHERE source = @source AND delivery_id = @delivery_id)
      AND NOT EXISTS (SELECT 1 FROM inbox_key WHERE @body_key::bytea IS NOT NULL AND source = @source AND body_key = @body_key::bytea)
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
