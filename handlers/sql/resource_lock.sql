-- Held until the transaction ends: transactions taking the same key run one
-- at a time, across every process (one resource's deliveries; one payment
-- intent's refund bookings). Two keys that collide in the hash merely
-- serialise; correctness does not depend on it being unique.
SELECT pg_advisory_xact_lock(hashtextextended(@lock_key, 0))
