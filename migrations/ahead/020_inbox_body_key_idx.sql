-- migrations/020_inbox_body_key.up.sql: the unique index of replayed
-- bodies, built without holding ingest's writes.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS inbox_body_key_idx ON inbox (source, body_key) WHERE body_key IS NOT NULL
