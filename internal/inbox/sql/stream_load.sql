-- The deliveries a follower's page holds (stream_scan.sql chose them), in
-- id order, with the body byte for byte and the headers as stored. The
-- bounds let PostgreSQL skip the partitions outside them. A delivery
-- retention deleted since the scan is simply not there.
SELECT id, source, delivery_id, event_type, received_at, headers, payload
FROM inbox
WHERE id = ANY(@ids::bigint[])
  AND id >= @first::bigint
  AND id <= @last::bigint
ORDER BY id
