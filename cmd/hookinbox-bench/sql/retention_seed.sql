-- One chunk of the retention scenario's expired history: deliveries $1..$2,
-- with ids $3 + n, processed GitHub pushes received 40 days ago 1 ms
-- apart, each with its key and outcome row as ingest and processing leave
-- them. The 2 KB bodies are hex digests: they compress about as much as
-- JSON does, not to nothing.
WITH src AS MATERIALIZED (
    SELECT $3::bigint + g AS id, 'expired-' || g AS delivery_id,
           convert_to('{"ref":"refs/heads/main","n":' || g || ',"commits":"'
                      || (SELECT string_agg(md5(g::text || '-' || i), '') FROM generate_series(1, 63) i) || '"}', 'UTF8') AS body,
           now() - interval '40 days' + g * interval '1 ms' AS received_at
    FROM generate_series($1::bigint, $2::bigint) g
), keys AS (
    INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin)
    SELECT 'github', delivery_id, id, sha256(body), 'webhook' FROM src
), stored AS (
    INSERT INTO inbox (id, source, delivery_id, event_type, headers, payload, payload_sha256, received_at)
    SELECT id, 'github', delivery_id, 'push', '{"Content-Type": ["application/json"]}', body, sha256(body), received_at FROM src
)
INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at)
SELECT id, 'github', 'push', received_at, 'processed', received_at + interval '50 ms' FROM src
