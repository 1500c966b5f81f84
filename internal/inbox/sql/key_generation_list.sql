-- The generations of inbox_key, oldest first
-- (migrations/032_inbox_key_generations.up.sql).
SELECT lo, hi, opened_at FROM inbox_key_generation ORDER BY lo
