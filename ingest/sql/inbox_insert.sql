-- The unique constraint decides duplicates: a concurrent insert of the same
-- (source, delivery_id) waits for the first transaction and then does nothing.
INSERT INTO inbox (source, delivery_id, event_type, occurred_at, headers, payload, payload_sha256, origin)
VALUES (@source, @delivery_id, @event_type, @occurred_at, @headers, @payload, @payload_sha256, @origin)
ON CONFLICT (source, delivery_id) DO NOTHING
RETURNING id
