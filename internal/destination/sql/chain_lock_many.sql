-- The turn rows of several (destination, resource)s, locked in one order
-- (source, resource). Every turn this version takes or hands on is taken
-- or handed on under the destination's state row (state_lock.sql); an
-- older replica's processing, during a rolling deploy, takes turns under
-- these rows' locks alone. A statement of its own, so that the next one
-- (chain_finish_many.sql) sees every send such a processing enqueued
-- before the locks were taken; uncontended otherwise.
SELECT 1
FROM destination_resource
WHERE destination = @destination
  AND (source, resource_key) IN (SELECT * FROM unnest(@sources::text[], @resource_keys::text[]))
ORDER BY source, resource_key
FOR UPDATE
