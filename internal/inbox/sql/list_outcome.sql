-- list.sql for a list filtered by a decided status that stays
-- small (skipped, failed) or by a resource, without until: the candidates
-- come newest first from inbox_outcome's indexes (status, resource), so
-- the list costs what its matches cost, not a walk down the whole inbox
-- past the rows of other statuses. The other filters apply to each row, as
-- in list.sql.
SELECT d.id, d.source, d.delivery_id, d.event_type, d.status, d.origin, d.resource_key, d.stale,
       d.occurred_at, d.received_at, d.processed_at, d.last_error, octet_length(d.payload) AS size
FROM inbox_outcome o
JOIN delivery d ON d.id = o.inbox_id
WHERE (@status::text IS NULL OR o.status = @status::text)
  AND (@resource::text IS NULL OR o.resource_key = @resource::text)
  AND (@cursor::bigint IS NULL OR o.inbox_id < @cursor::bigint)
  AND (@after::bigint IS NULL OR o.inbox_id > @after::bigint)
  AND (@source::text IS NULL OR d.source = @source::text)
  AND (@event_type::text IS NULL OR d.event_type = @event_type::text)
  AND (@since::timestamptz IS NULL OR d.received_at >= @since::timestamptz)
ORDER BY o.inbox_id DESC
LIMIT @limit
