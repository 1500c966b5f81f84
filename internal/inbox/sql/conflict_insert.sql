-- A webhook refused with 409 delivery_id_conflict, for operators. Never
-- the inbox: a row of its own, in a statement of its own. The same
-- conflicting body sent again is counted on its row, not added
-- (migrations/033_delivery_conflict_once.up.sql).
INSERT INTO delivery_conflict (source, delivery_id, inbox_id, payload_sha256, headers, body, body_size)
VALUES (@source, @delivery_id, @inbox_id, @payload_sha256, @headers, @body, @body_size)
ON CONFLICT (source, delivery_id, payload_sha256) DO UPDATE
SET copies = delivery_conflict.copies + 1, last_received_at = now()
