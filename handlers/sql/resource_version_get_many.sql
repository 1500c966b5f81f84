-- resource_version_get.sql for a batch's resources at once: a row for each
-- resource that has a version, numbered by its place in the arguments
-- (from 1). It must run after the locks are taken, in a statement of its
-- own: under READ COMMITTED its snapshot is then taken with the locks held,
-- and sees what the last holder committed. The LIMIT keeps the planner
-- from flattening the lookup into a join, so a cached generic plan still
-- reads each key by the primary key.
SELECT k.n, v.applied_at, v.applied_received_at, v.receipt_applied_at
FROM unnest(@sources::text[], @resource_keys::text[]) WITH ORDINALITY AS k (source, resource_key, n)
CROSS JOIN LATERAL (
    SELECT applied_at, applied_received_at, receipt_applied_at FROM resource_version
    WHERE source = k.source AND resource_key = k.resource_key
    LIMIT 1
) AS v
