-- Newest first, keyset-paginated on id. Each filter is off when its
-- parameter is NULL. @after (newer than) is the console's poll for new
-- deliveries on its first page.
SELECT id, source, delivery_id, event_type, status, origin, resource_key, stale,
       occurred_at, received_at, processed_at, last_error, octet_length(payload) AS size
FROM delivery
WHERE (@cursor::bigint IS NULL OR id < @cursor::bigint)
  AND (@after::bigint IS NULL OR id > @after::bigint)
  AND (@source::text IS NULL OR source = @source::text)
  AND (@status::text IS NULL OR status = @status::text)
  AND (@event_type::text IS NULL OR event_type = @event_type::text)
  AND (@resource::text IS NULL OR resource_key = @resource::text)
  AND (@since::timestamptz IS NULL OR received_at >= @since::timestamptz)
  AND (@until::timestamptz IS NULL OR received_at < @until::timestamptz)
ORDER BY id DESC
LIMIT @limit
