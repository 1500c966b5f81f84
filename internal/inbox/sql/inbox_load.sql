SELECT id, source, delivery_id, event_type, occurred_at, received_at, headers, payload
FROM inbox
WHERE id = @id
