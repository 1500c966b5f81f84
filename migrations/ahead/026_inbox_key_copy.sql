-- The keys of the deliveries with ids [@from, @to). A key the insert
-- trigger added, or a tombstone a delete left (026_inbox_key_follow.sql),
-- conflicts and stays as it is; an insert that meets a delete's tombstone
-- not yet committed waits for that delete.
INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin, body_key)
SELECT source, delivery_id, id, payload_sha256, origin, body_key
FROM inbox
WHERE id >= @from AND id < @to
ON CONFLICT DO NOTHING
