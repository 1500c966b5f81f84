-- Records a failed attempt. While retries remain the delivery keeps its
-- status and shows the last error; after the last attempt (or a permanent
-- error) it is failed: a pending delivery's inbox_pending row becomes an
-- inbox_outcome row, and a processed one (a replay that failed) becomes
-- failed. Unless another run processed the delivery after this attempt
-- began: a concurrent replay, or this attempt's own batch whose COMMIT
-- failed to report but happened. That run's outcome stands: it deleted the
-- pending row, or its processed_at is later.
--
-- A delivery has a pending row or an outcome row, never both, and every
-- part of this statement reads the state from before it, so exactly one of
-- the parts below finds the delivery.
WITH retrying AS (
    UPDATE inbox_pending SET last_error = @last_error
    WHERE inbox_id = @id AND NOT @final
), given_up AS (
    DELETE FROM inbox_pending
    WHERE inbox_id = @id AND @final
    RETURNING inbox_id, source, event_type, received_at
), failed AS (
    INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, last_error)
    SELECT inbox_id, source, event_type, received_at, 'failed', @last_error FROM given_up
)
UPDATE inbox_outcome
SET last_error = @last_error,
    status = CASE WHEN @final THEN 'failed' ELSE status END
WHERE inbox_id = @id
  AND (processed_at IS NULL OR processed_at < @attempt_started_at)
