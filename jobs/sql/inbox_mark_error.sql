-- While retries remain the row keeps its status and shows the last error;
-- after the last attempt (or a permanent error) it is failed. Unless
-- another run processed the row after this attempt began: a concurrent
-- replay, or this attempt's own batch whose COMMIT failed to report but
-- happened. That run's outcome stands.
UPDATE inbox
SET last_error = @last_error,
    status = CASE WHEN @final THEN 'failed' ELSE status END
WHERE id = @id
  AND (processed_at IS NULL OR processed_at < @attempt_started_at)
