-- A send with what its request needs: the delivery's body byte for byte
-- and its Content-Type.
SELECT s.state, s.source, s.delivery_id, s.event_type, s.key, s.ordered, s.skip_stale, s.resource_key,
       s.event_at, s.event_received_at, s.at_is_receipt, s.attempts, s.created_at,
       i.payload, i.headers->'Content-Type'->>0
FROM destination_send s
JOIN inbox i ON i.id = s.inbox_id
WHERE s.id = @id
