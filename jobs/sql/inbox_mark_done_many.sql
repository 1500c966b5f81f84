-- inbox_mark_done.sql for a processing batch, in one statement. The batch
-- passes ids sorted, so rows are normally locked in id order; should two
-- batches still deadlock, PostgreSQL aborts one and its deliveries are
-- processed one by one.
UPDATE inbox AS i
SET status = u.status, resource_key = u.resource_key, stale = u.stale, processed_at = clock_timestamp(), last_error = NULL
FROM unnest(@ids::bigint[], @statuses::text[], @resource_keys::text[], @stales::bool[]) AS u (id, status, resource_key, stale)
WHERE i.id = u.id
