-- Where a follower that starts at a time begins: the least id among the
-- first 1,000 deliveries received at or after @since, from the
-- received_at index; NULL when none was. Of the first, not the first
-- only: received_at is its transaction's start, and the id is taken later
-- in it, so of transactions running at once the one received first may
-- hold the greater id.
SELECT min(id)
FROM (SELECT id FROM inbox WHERE received_at >= @since::timestamptz ORDER BY received_at LIMIT 1000) AS first
