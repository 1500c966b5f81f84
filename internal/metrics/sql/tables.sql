-- Size and oldest row of the tables retention keeps in check; the inbox's
-- through the view internal/inbox publishes for it (migrations/035), which
-- sums its tables and their partitions.
SELECT 'inbox', s.bytes::float8,
       coalesce(extract(epoch FROM now() - s.oldest_received_at), 0)::float8
FROM delivery_storage s
UNION ALL
SELECT 'api_idempotency', pg_total_relation_size('api_idempotency')::float8,
       coalesce(extract(epoch FROM now() - (SELECT min(created_at) FROM api_idempotency)), 0)::float8
UNION ALL
SELECT 'river_job', pg_total_relation_size('river_job')::float8,
       coalesce(extract(epoch FROM now() - (SELECT min(created_at) FROM river_job)), 0)::float8
