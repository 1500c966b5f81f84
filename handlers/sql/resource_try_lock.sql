-- resource_lock.sql for a transaction that must not wait (it holds other
-- locks already): true if the lock is now held, false if another
-- transaction has it.
SELECT pg_try_advisory_xact_lock(hashtextextended(@lock_key, 0))
