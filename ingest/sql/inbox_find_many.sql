SELECT i.id, i.source, i.delivery_id, i.payload_sha256, i.origin
FROM inbox i
JOIN unnest(@sources::text[], @delivery_ids::text[]) AS k (source, delivery_id)
  ON i.source = k.source AND i.delivery_id = k.delivery_id
