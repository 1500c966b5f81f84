-- The highest id the overflow partition holds: a new range partition must
-- start above it.
SELECT max(id) FROM inbox_overflow
