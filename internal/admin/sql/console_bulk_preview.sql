-- How many deliveries a bulk replay's filter selects now, counted up to
-- @cap (one more than a bulk replay takes): the count stops there.
SELECT count(*) FROM (
    SELECT 1 FROM inbox
    WHERE (@source::text IS NULL OR source = @source::text)
      AND (@status::text IS NULL OR status = @status::text)
      AND (@event_type::text IS NULL OR event_type = @event_type::text)
      AND (@since::timestamptz IS NULL OR received_at >= @since::timestamptz)
      AND (@until::timestamptz IS NULL OR received_at < @until::timestamptz)
    LIMIT @cap
) matched
