-- How many deliveries a bulk replay's filter selects now, counted up to
-- @cap (one more than a bulk replay takes): the count stops there. The
-- candidates come from one table: without a status the inbox; with one, the
-- table of that state (inbox_pending for received, else inbox_outcome),
-- which repeats the inbox row's source, event type and receipt time, so no
-- join. PostgreSQL pushes the filters into each branch and plans away the
-- two whose status condition is false. The same filters as
-- bulk_replay_insert.sql, which takes what this counts.
SELECT count(*) FROM (
    SELECT 1
    FROM (SELECT source, event_type, received_at FROM inbox WHERE @status::text IS NULL
          UNION ALL
          SELECT source, event_type, received_at FROM inbox_pending WHERE @status::text = 'received'
          UNION ALL
          SELECT source, event_type, received_at FROM inbox_outcome WHERE status = @status::text) candidates
    WHERE (@source::text IS NULL OR source = @source::text)
      AND (@event_type::text IS NULL OR event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR received_at < @until::timestamptz)
    LIMIT @cap
) matched
