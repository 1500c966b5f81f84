-- Held until the transaction ends: deliveries for one resource run one at a
-- time, across every process. Two resources whose keys collide in the hash
-- merely serialise; correctness does not depend on it being unique.
SELECT pg_advisory_xact_lock(hashtextextended(@lock_key, 0))
