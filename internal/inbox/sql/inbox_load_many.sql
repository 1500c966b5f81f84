-- inbox_load.sql for a processing batch, without the headers and payload:
-- inbox_payloads.sql reads them for the deliveries a handler matches
-- (decoding every row's headers was a tenth of a worker's CPU).
SELECT id, source, delivery_id, event_type, occurred_at, received_at, NULL::jsonb AS headers, NULL::bytea AS payload
FROM inbox
WHERE id = ANY(@ids::bigint[])
