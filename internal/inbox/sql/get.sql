SELECT id, source, delivery_id, event_type, status, origin, resource_key, stale,
       occurred_at, received_at, processed_at, last_error, octet_length(payload) AS size,
       headers, payload, payload_sha256
FROM delivery
WHERE id = @id
