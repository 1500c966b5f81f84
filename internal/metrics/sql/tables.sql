-- Size and oldest row of the tables retention keeps in check.
SELECT 'inbox', pg_total_relation_size('inbox')::float8,
       coalesce(extract(epoch FROM now() - (SELECT min(received_at) FROM inbox)), 0)::float8
UNION ALL
SELECT 'api_idempotency', pg_total_relation_size('api_idempotency')::float8,
       coalesce(extract(epoch FROM now() - (SELECT min(created_at) FROM api_idempotency)), 0)::float8
UNION ALL
SELECT 'river_job', pg_total_relation_size('river_job')::float8,
       coalesce(extract(epoch FROM now() - (SELECT min(created_at) FROM river_job)), 0)::float8
