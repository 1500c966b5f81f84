-- A webhook refused with 409 delivery_id_conflict, for operators. Never
-- the inbox: a row of its own, in a statement of its own.
INSERT INTO delivery_conflict (source, delivery_id, inbox_id, payload_sha256, headers, body, body_size)
VALUES (@source, @delivery_id, @inbox_id, @payload_sha256, @headers, @body, @body_size)
