-- inbox_load.sql for a processing batch, but for the payloads, which
-- inbox_payloads.sql reads for the deliveries a handler matches.
SELECT id, source, delivery_id, event_type, occurred_at, received_at, headers, NULL::bytea AS payload
FROM inbox
WHERE id = ANY(@ids::bigint[])
