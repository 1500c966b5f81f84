-- Snapshot the matching ids, oldest first. Each filter is off when its
-- parameter is NULL.
INSERT INTO bulk_replay (filter, inbox_ids)
SELECT @filter, coalesce(array_agg(id ORDER BY id), '{}')
FROM (
    SELECT id FROM inbox
    WHERE (@source::text IS NULL OR source = @source::text)
      AND (@status::text IS NULL OR status = @status::text)
      AND (@event_type::text IS NULL OR event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR received_at < @until::timestamptz)
    ORDER BY id
    LIMIT @limit
) matched
RETURNING id
