-- BenchmarkConsolePages' data: 1,000,000 deliveries received over the last
-- 29 days from three sources and six common event types (and ten of a
-- rare one), 0.1 % failed, a backlog of 100 among the newest, a quarter
-- skipped; a day of per-minute ingest counts; 1,000 conflict records; a
-- finished bulk replay of 100,000 deliveries whose jobs River has cleaned.
INSERT INTO inbox (id, source, delivery_id, event_type, headers, payload, payload_sha256, received_at)
SELECT nextval('inbox_id_seq'), (ARRAY['github', 'stripe', 'billing'])[1 + i % 3],
       'bench-' || i,
       CASE WHEN i % 100000 = 7 THEN 'issue_comment'
            ELSE (ARRAY['push', 'issues', 'pull_request', 'charge.succeeded', 'invoice.paid', 'payment_intent.succeeded'])[1 + i % 6] END,
       '{"Content-Type": ["application/json"], "User-Agent": ["bench"]}',
       convert_to('{"id":"bench-' || i || '","type":"event","data":{"id":"obj_' || (i % 50000) || '","amount":' || (i % 997) || '}}', 'UTF8'),
       sha256(convert_to(i::text, 'UTF8')),
       now() - make_interval(secs => (1000000 - i) * 2.5)
FROM generate_series(1, 1000000) i;
INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin)
SELECT source, delivery_id, id, payload_sha256, origin FROM inbox;

INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
SELECT id, source, event_type, received_at FROM inbox WHERE id > 999000 AND id % 10 = 0 AND id % 1000 <> 0;

INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at, resource_key)
SELECT id, source, event_type, received_at,
       CASE WHEN id % 1000 = 0 THEN 'failed'
            WHEN id % 4 = 0 THEN 'skipped'
            ELSE 'processed' END,
       CASE WHEN id % 1000 <> 0 THEN received_at END,
       'obj_' || (id % 50000)
FROM inbox WHERE NOT (id > 999000 AND id % 10 = 0 AND id % 1000 <> 0);

INSERT INTO ingest_minute (minute, source, outcome, count)
SELECT m, s, o, 1 + (extract(epoch FROM m)::bigint % 40)
FROM generate_series(date_trunc('minute', now()) - interval '1439 minutes', date_trunc('minute', now()), interval '1 minute') m,
     unnest(ARRAY['github', 'stripe', 'billing']) s,
     unnest(ARRAY['accepted', 'duplicate', 'invalid_signature', 'unavailable']) o;

INSERT INTO delivery_conflict (source, delivery_id, inbox_id, received_at, payload_sha256, headers, body, body_size)
SELECT 'stripe', 'bench-' || (i * 3 + 1), i * 3 + 1, now() - make_interval(mins => i),
       sha256(convert_to('c' || i, 'UTF8')), '{"Content-Type": ["application/json"]}',
       convert_to('{"id":"bench-' || (i * 3 + 1) || '","type":"event","data":{"id":"obj_x","amount":1}}', 'UTF8'), 70
FROM generate_series(1, 1000) i;

INSERT INTO bulk_replay (filter, inbox_ids, position, enqueued, state, finished_at)
SELECT '{"status": "processed", "limit": 100000}', array_agg(i ORDER BY i), 100000, 100000, 'finished', now()
FROM generate_series(1, 100000) i;
INSERT INTO replay (inbox_id, bulk_replay_id, job_id)
SELECT i, 1, 1000000000 + i FROM generate_series(1, 100000) i;
