-- list.sql for the deliveries with a failed send
-- (send_status=failed), to one destination or any: the candidates are the
-- failed sends, read from their partial index (destination_send_failed_idx)
-- and newest delivery first, so the list costs what the failed sends cost,
-- not a walk down the inbox. A failed send stays failed until an operator
-- retries it, so these are few next to the inbox. The other filters apply
-- to each row, as in list.sql; until too, on a list ordered by
-- id like the others here.
SELECT d.id, d.source, d.delivery_id, d.event_type, d.status, d.origin, d.resource_key, d.stale,
       d.occurred_at, d.received_at, d.processed_at, d.last_error, octet_length(d.payload) AS size
FROM (
    SELECT DISTINCT inbox_id
    FROM destination_send
    WHERE state = 'failed'
      AND (@destination::text IS NULL OR destination = @destination::text)
      AND (@cursor::bigint IS NULL OR inbox_id < @cursor::bigint)
      AND (@after::bigint IS NULL OR inbox_id > @after::bigint)
) s
JOIN delivery d ON d.id = s.inbox_id
WHERE (@source::text IS NULL OR d.source = @source::text)
  AND (@status::text IS NULL OR d.status = @status::text)
  AND (@event_type::text IS NULL OR d.event_type = @event_type::text)
  AND (@resource::text IS NULL OR d.resource_key = @resource::text)
  AND (@since::timestamptz IS NULL OR d.received_at >= @since::timestamptz)
  AND (@until::timestamptz IS NULL OR d.received_at < @until::timestamptz)
ORDER BY s.inbox_id DESC
LIMIT @limit
