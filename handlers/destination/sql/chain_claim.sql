-- The row of one (destination, resource) whose lock serialises the sends
-- that enqueue with the sends that finish (chain_lock.sql).
INSERT INTO destination_resource (destination, source, resource_key, busy)
VALUES (@destination, @source, @resource_key, false)
ON CONFLICT DO NOTHING
