-- migrations/011_inbox_event_type.up.sql: the event type filter's index,
-- built without holding ingest's writes.
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_event_type_idx ON inbox (event_type, id)
