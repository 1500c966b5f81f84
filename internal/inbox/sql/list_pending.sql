-- list.sql for status received without until: the candidates
-- are inbox_pending's rows (the backlog), newest first by its key. The
-- other filters apply to each row, as in list.sql (a pending
-- delivery names no resource yet, so a resource filter matches none).
SELECT d.id, d.source, d.delivery_id, d.event_type, d.status, d.origin, d.resource_key, d.stale,
       d.occurred_at, d.received_at, d.processed_at, d.last_error, octet_length(d.payload) AS size
FROM inbox_pending p
JOIN delivery d ON d.id = p.inbox_id
WHERE (@cursor::bigint IS NULL OR p.inbox_id < @cursor::bigint)
  AND (@after::bigint IS NULL OR p.inbox_id > @after::bigint)
  AND (@source::text IS NULL OR d.source = @source::text)
  AND (@event_type::text IS NULL OR d.event_type = @event_type::text)
  AND (@resource::text IS NULL OR d.resource_key = @resource::text)
  AND (@since::timestamptz IS NULL OR d.received_at >= @since::timestamptz)
ORDER BY p.inbox_id DESC
LIMIT @limit
