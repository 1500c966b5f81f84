-- Deliveries $1..$2 of the upgrade scenario's inbox, in the schema of
-- migration 025 (before the inbox had partitions): processed GitHub
-- pushes received 1 ms apart, with random-looking delivery ids (GitHub's
-- GUIDs) and 2 KB bodies of hex digests, which compress about as much as
-- JSON does. Each has its outcome row, as processing leaves it.
WITH src AS MATERIALIZED (
    SELECT md5('upgrade-' || g)::uuid::text AS delivery_id,
           convert_to('{"ref":"refs/heads/main","n":' || g || ',"commits":"'
                      || (SELECT string_agg(md5(g::text || '-' || i), '') FROM generate_series(1, 63) i) || '"}', 'UTF8') AS body,
           now() - interval '1 day' + g * interval '1 ms' AS received_at
    FROM generate_series($1::bigint, $2::bigint) g
), stored AS (
    INSERT INTO inbox (source, delivery_id, event_type, headers, payload, payload_sha256, received_at)
    SELECT 'github', delivery_id, 'push', '{"Content-Type": ["application/json"]}', body, sha256(body), received_at FROM src
    RETURNING id, received_at
)
INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at)
SELECT id, 'github', 'push', received_at, 'processed', received_at + interval '50 ms' FROM stored
