-- Rows $1..$2 of a prefill's history of $3 deliveries (-steady-prefill,
-- -retention-prefill): processed GitHub deliveries of event $5 received
-- 1 ms apart up to now, each with its key, the outcome row and the completed River job a run leaves
-- (River keeps completed jobs a day by default). Bodies and resource keys
-- come from prefill_payload (the run's own bodies); delivery ids are
-- random-looking, as GitHub's GUIDs, so the unique index grows as it does.
WITH src AS MATERIALIZED (
    SELECT md5('prefill-' || g)::uuid::text AS delivery_id, p.body, p.resource_key,
           now() - ($3::bigint - g) * interval '1 ms' AS received_at
    FROM generate_series($1::bigint, $2::bigint) g
    JOIN prefill_payload p ON p.i = g % $4::int
), stored AS (
    INSERT INTO inbox (id, source, delivery_id, event_type, headers, payload, payload_sha256, received_at)
    SELECT nextval('inbox_id_seq'), 'github', delivery_id, $5::text,
           jsonb_build_object('Content-Type', jsonb_build_array('application/json'),
                              'User-Agent', jsonb_build_array('GitHub-Hookshot/044aadd'),
                              'X-Github-Event', jsonb_build_array($5::text),
                              'X-Github-Delivery', jsonb_build_array(delivery_id),
                              'X-Hub-Signature-256', jsonb_build_array('sha256=' || encode(sha256(body), 'hex'))),
           body, sha256(body), received_at
    FROM src
    RETURNING id, delivery_id, payload_sha256, received_at
), keys AS (
    INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin)
    SELECT 'github', delivery_id, id, payload_sha256, 'webhook' FROM stored
), outcome AS (
    INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at, resource_key, stale)
    SELECT s.id, 'github', $5::text, s.received_at, 'processed', s.received_at + interval '50 ms', src.resource_key, false
    FROM stored s JOIN src USING (delivery_id)
)
INSERT INTO river_job (args, attempt, attempted_at, attempted_by, created_at, finalized_at, kind, max_attempts,
                       priority, queue, scheduled_at, state)
SELECT jsonb_build_object('inbox_id', id), 1, received_at + interval '10 ms', ARRAY['prefill'], received_at,
       received_at + interval '50 ms', 'process_delivery', 25, 1, 'deliveries', received_at, 'completed'
FROM stored
