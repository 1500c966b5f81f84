-- Snapshot the matching ids, oldest first. Each filter is off when its
-- parameter is NULL. The candidates come from one table: without a status
-- the inbox; with one, the table of that state (inbox_pending for
-- received, else inbox_outcome), which repeats the inbox row's source,
-- event type and receipt time, as count_selected.sql counts them.
INSERT INTO bulk_replay (filter, inbox_ids)
SELECT @filter, coalesce(array_agg(id ORDER BY id), '{}')
FROM (
    SELECT id
    FROM (SELECT id, source, event_type, received_at FROM inbox WHERE @status::text IS NULL
          UNION ALL
          SELECT inbox_id, source, event_type, received_at FROM inbox_pending WHERE @status::text = 'received'
          UNION ALL
          SELECT inbox_id, source, event_type, received_at FROM inbox_outcome WHERE status = @status::text) candidates
    WHERE (@source::text IS NULL OR source = @source::text)
      AND (@event_type::text IS NULL OR event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR received_at < @until::timestamptz)
    ORDER BY id
    LIMIT @limit
) matched
RETURNING id
