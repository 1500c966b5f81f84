-- Snapshot the matching ids, oldest first. Each filter is off when its
-- parameter is NULL. With a status, the candidates come from the state
-- tables (inbox_pending, inbox_outcome's status index), without one from
-- the inbox, as internal/admin/sql/console_bulk_preview.sql counts them.
INSERT INTO bulk_replay (filter, inbox_ids)
SELECT @filter, coalesce(array_agg(id ORDER BY id), '{}')
FROM (
    SELECT i.id FROM inbox i
    WHERE @status::text IS NULL
      AND (@source::text IS NULL OR i.source = @source::text)
      AND (@event_type::text IS NULL OR i.event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR i.received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR i.received_at < @until::timestamptz)
    UNION ALL
    SELECT i.id
    FROM (SELECT inbox_id FROM inbox_pending WHERE @status::text = 'received'
          UNION ALL
          SELECT inbox_id FROM inbox_outcome WHERE status = @status::text) s
    JOIN inbox i ON i.id = s.inbox_id
    WHERE (@source::text IS NULL OR i.source = @source::text)
      AND (@event_type::text IS NULL OR i.event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR i.received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR i.received_at < @until::timestamptz)
    ORDER BY id
    LIMIT @limit
) matched
RETURNING id
