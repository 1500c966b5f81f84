-- processed_at is the statement's time, just before the commit, not the
-- transaction's start: a run that failed decides by it whether another run
-- processed the row after it began (inbox_mark_error.sql).
UPDATE inbox
SET status = @status, resource_key = @resource_key, stale = @stale, processed_at = clock_timestamp(), last_error = NULL
WHERE id = @id
