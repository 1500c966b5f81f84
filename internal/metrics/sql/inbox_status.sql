-- Exact counts for the statuses that stay small (work pending or gone
-- wrong, served by the partial status index); processed is estimated from
-- the planner's row count, since counting a large inbox on every scrape
-- would be a full scan.
SELECT status, count(*)::float8 FROM inbox WHERE status <> 'processed' GROUP BY status
UNION ALL
SELECT 'processed', greatest(
    (SELECT reltuples FROM pg_class WHERE oid = 'inbox'::regclass)
    - (SELECT count(*) FROM inbox WHERE status <> 'processed'), 0)::float8
