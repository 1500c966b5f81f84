-- Per source: deliveries not yet processed and the oldest of them, and
-- deliveries that failed. From the pending table and the outcome table's
-- partial status index (status <> 'processed'): the cost follows the
-- backlog and the failures, not the size of the inbox.
SELECT source, 'received' AS status, count(*), min(received_at)
FROM inbox_pending
GROUP BY source
UNION ALL
SELECT i.source, 'failed', count(*), min(i.received_at)
FROM inbox_outcome o JOIN inbox i ON i.id = o.inbox_id
WHERE o.status = 'failed'
GROUP BY i.source
