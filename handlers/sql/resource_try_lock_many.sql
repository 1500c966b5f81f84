-- resource_try_lock.sql for a batch's resources at once: one row per key,
-- in the keys' order, true if the lock is now held, false if another
-- transaction has it. Nothing waits, so the order the locks are taken in
-- cannot deadlock.
SELECT pg_try_advisory_xact_lock(hashtextextended(k.lock_key, 0))
FROM unnest(@lock_keys::text[]) WITH ORDINALITY AS k (lock_key, n)
ORDER BY k.n
