-- Dropped partitions whose keys are still to be deleted, oldest first,
-- with the first id not yet done.
SELECT lo, hi, next FROM inbox_retired ORDER BY lo
