-- Dropped partitions whose keys are still to be deleted, oldest first,
-- with the first id not yet done and the pace for their keys.
SELECT lo, hi, next, keys_per_second FROM inbox_retired ORDER BY lo
