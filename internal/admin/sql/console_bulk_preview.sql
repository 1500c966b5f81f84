-- How many deliveries a bulk replay's filter selects now, counted up to
-- @cap (one more than a bulk replay takes): the count stops there. With a
-- status, the candidates come from the state tables (inbox_pending,
-- inbox_outcome's status index), so a filter on a rare status costs its
-- matches, not a walk through the inbox; without one, from the inbox. The
-- same filters apply in both branches (jobs/sql/bulk_replay_insert.sql
-- takes what this counts).
SELECT count(*) FROM (
    SELECT 1 FROM inbox i
    WHERE @status::text IS NULL
      AND (@source::text IS NULL OR i.source = @source::text)
      AND (@event_type::text IS NULL OR i.event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR i.received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR i.received_at < @until::timestamptz)
    UNION ALL
    SELECT 1
    FROM (SELECT inbox_id FROM inbox_pending WHERE @status::text = 'received'
          UNION ALL
          SELECT inbox_id FROM inbox_outcome WHERE status = @status::text) s
    JOIN inbox i ON i.id = s.inbox_id
    WHERE (@source::text IS NULL OR i.source = @source::text)
      AND (@event_type::text IS NULL OR i.event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR i.received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR i.received_at < @until::timestamptz)
    LIMIT @cap
) matched
