-- Per source: deliveries not yet processed and the oldest of them, and
-- deliveries that failed. Through the partial status index (status <>
-- 'processed'): the cost follows the backlog and the failures, not the
-- size of the inbox.
SELECT source, status, count(*), min(received_at)
FROM inbox
WHERE status IN ('received', 'failed')
GROUP BY source, status
