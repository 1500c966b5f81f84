-- The failed sends of a page of deliveries, by (source, delivery_id)
-- through destination_send_once: a lookup per delivery, whatever the
-- number of sends kept.
SELECT s.source, s.delivery_id, s.destination, s.last_error, s.finished_at
FROM unnest(@sources::text[], @delivery_ids::text[]) AS k(source, delivery_id)
JOIN destination_send s ON s.source = k.source AND s.delivery_id = k.delivery_id
WHERE s.state = 'failed'
ORDER BY s.source, s.delivery_id, s.destination
