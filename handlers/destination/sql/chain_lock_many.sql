-- The turn rows of several (destination, resource)s, locked in one order
-- (source, resource): two transactions finishing several never wait on
-- each other crosswise. A statement of its own, so that the next one
-- (chain_finish_many.sql) sees every send enqueued before the locks were
-- taken.
SELECT 1
FROM destination_resource
WHERE destination = @destination
  AND (source, resource_key) IN (SELECT * FROM unnest(@sources::text[], @resource_keys::text[]))
ORDER BY source, resource_key
FOR UPDATE
