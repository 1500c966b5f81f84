-- How many deliveries a bulk replay's filter selects now, counted up to
-- @cap (one more than a bulk replay takes): the count stops there. Without
-- a status it reads the inbox; with one, the table of that state
-- (inbox_pending for received, else inbox_outcome), which repeats the
-- inbox row's source, event type and receipt time, so no join. The same
-- filters as jobs/sql/bulk_replay_insert.sql, which takes what this counts.
SELECT count(*) FROM (
    SELECT 1 FROM inbox
    WHERE @status::text IS NULL
      AND (@source::text IS NULL OR source = @source::text)
      AND (@event_type::text IS NULL OR event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR received_at < @until::timestamptz)
    UNION ALL
    SELECT 1 FROM inbox_pending
    WHERE @status::text = 'received'
      AND (@source::text IS NULL OR source = @source::text)
      AND (@event_type::text IS NULL OR event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR received_at < @until::timestamptz)
    UNION ALL
    SELECT 1 FROM inbox_outcome
    WHERE status = @status::text
      AND (@source::text IS NULL OR source = @source::text)
      AND (@event_type::text IS NULL OR event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR received_at < @until::timestamptz)
    LIMIT @cap
) matched
