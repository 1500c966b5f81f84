-- The transactions inserting into the inbox now, by their virtual
-- transaction id: those holding the key generations' fence
-- (key_fence.sql, lock space 26731, lock 1), which every
-- inserting transaction takes before it takes an id and holds until it
-- ends. With @among, only those of it still holding the fence. A virtual
-- transaction id is a backend's and a counter's, never reused while it
-- could matter here; and a transaction is visible as committed before its
-- locks are released, so one gone from this list has committed or rolled
-- back for every later snapshot.
SELECT coalesce(array_agg(virtualtransaction), '{}')
FROM pg_locks
WHERE locktype = 'advisory'
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND classid = 26731 AND objid = 1 AND objsubid = 2
  AND granted
  AND (@among::text[] IS NULL OR virtualtransaction = ANY(@among::text[]))
