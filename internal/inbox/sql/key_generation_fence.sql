-- The key generations' fence taken exclusively: it waits for every
-- transaction that holds it shared to end, every ingest transaction that
-- inserted or is inserting a key (key_fence.sql), and holds off
-- new ones until the generation is open and committed.
SELECT pg_advisory_xact_lock(26731, 1)
