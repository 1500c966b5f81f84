-- migrations/032_inbox_key_generations.up.sql: checking every key against
-- the first generation's bound, which holds no writes (SHARE UPDATE
-- EXCLUSIVE), so that attaching the table as that generation scans nothing.
ALTER TABLE inbox_key VALIDATE CONSTRAINT inbox_key_below
