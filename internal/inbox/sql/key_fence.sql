-- The key generations' fence (migrations/032_inbox_key_generations.up.sql),
-- held shared by every transaction that inserts a key, from before its
-- insert until it ends. A new generation opens under it held exclusively,
-- so no two inserts of one key fall in two generations at once. It is a
-- statement of its own, before the insert: in READ COMMITTED the insert's
-- snapshot is then taken once the fence is held, and sees every key of
-- the generations before. In a transaction whose one snapshot is taken by
-- its first statement (REPEATABLE READ, SERIALIZABLE) it would not, so the
-- isolation level is returned for the caller to refuse any other. (Lock
-- space 26731, lock 1: the handlers' advisory locks take one bigint key,
-- which is another space.)
SELECT current_setting('transaction_isolation')
FROM (SELECT pg_advisory_xact_lock_shared(26731, 1)) AS fence (held)
