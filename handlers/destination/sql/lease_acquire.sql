-- Leases a free slot of a destination (max_in_flight across replicas). A
-- lease whose holder died expires by itself.
UPDATE destination_lease l SET holder = @holder, expires_at = clock_timestamp() + @ttl::interval
FROM (SELECT slot FROM destination_lease
      WHERE destination = @destination AND slot < @max_in_flight AND expires_at < clock_timestamp()
      ORDER BY slot LIMIT 1
      FOR UPDATE SKIP LOCKED) free
WHERE l.destination = @destination AND l.slot = free.slot
RETURNING l.slot
