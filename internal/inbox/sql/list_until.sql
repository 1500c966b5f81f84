-- list.sql for a list with until (a window back in time):
-- newest first by received_at, then id, keyset-paginated on both, so that
-- PostgreSQL reads the received_at index backward from until. Ordered by
-- id, it would walk the primary key from the newest row and skip every
-- row received since until (0.3 s at 1,000,000 rows, ten times that at
-- ten million).
SELECT id, source, delivery_id, event_type, status, origin, resource_key, stale,
       occurred_at, received_at, processed_at, last_error, octet_length(payload) AS size
FROM delivery
WHERE received_at < @until::timestamptz
  AND (@cursor_at::timestamptz IS NULL OR (received_at, id) < (@cursor_at::timestamptz, @cursor::bigint))
  AND (@after::bigint IS NULL OR id > @after::bigint)
  AND (@source::text IS NULL OR source = @source::text)
  AND (@status::text IS NULL OR status = @status::text)
  AND (@event_type::text IS NULL OR event_type = @event_type::text)
  AND (@resource::text IS NULL OR resource_key = @resource::text)
  AND (@since::timestamptz IS NULL OR received_at >= @since::timestamptz)
ORDER BY received_at DESC, id DESC
LIMIT @limit
