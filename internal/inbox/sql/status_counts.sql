-- Inbox rows for every status, 0 included. The statuses that stay small
-- (work pending or gone wrong) are counted exactly: the pending table, and
-- the outcome table's partial status index. processed is counted exactly
-- up to @exact_limit rows (a scan that stops there); past it, counting on
-- every scrape would read the whole table, so it is the planner's estimate
-- (never below the limit), and the third column says so.
WITH small AS (
    SELECT 'received' AS status, count(*) AS n FROM inbox_pending
    UNION ALL
    SELECT status, count(*) FROM inbox_outcome WHERE status <> 'processed' GROUP BY status
), processed_capped AS (
    SELECT count(*) AS n FROM (SELECT 1 FROM inbox_outcome WHERE status = 'processed' LIMIT @exact_limit + 1) capped
), processed AS (
    SELECT CASE WHEN p.n <= @exact_limit THEN p.n
                ELSE greatest((SELECT reltuples FROM pg_class WHERE oid = 'inbox_outcome'::regclass)::bigint
                              - (SELECT coalesce(sum(n), 0) FROM small WHERE status <> 'received'), @exact_limit + 1)
           END AS n,
           p.n > @exact_limit AS estimated
    FROM processed_capped p
)
SELECT s.status, coalesce(small.n, 0)::float8, 0::float8
FROM (VALUES ('received'), ('skipped'), ('failed')) s (status)
LEFT JOIN small USING (status)
UNION ALL
SELECT 'processed', n::float8, CASE WHEN estimated THEN 1 ELSE 0 END::float8 FROM processed
