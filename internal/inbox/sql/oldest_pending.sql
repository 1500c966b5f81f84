SELECT coalesce(extract(epoch FROM now() - min(received_at)), 0)::float8
FROM inbox_pending
