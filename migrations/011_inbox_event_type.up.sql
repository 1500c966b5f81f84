-- The event type filter of the deliveries list (admin API and console),
-- newest first: without it a rare event type scans the whole inbox (0.5 s
-- at 1,000,000 rows). About 40 MB per million rows, and one more index
-- entry per delivery. Building it holds inbox writes for its duration
-- (about 15 s per million rows measured on the 2-core reference machine,
-- under load): on a large inbox, `hookinbox migrate --prepare` builds it
-- beforehand, CONCURRENTLY (ahead/011_inbox_event_type_idx.sql), and this
-- migration finds it there.
CREATE INDEX IF NOT EXISTS inbox_event_type_idx ON inbox (event_type, id);
