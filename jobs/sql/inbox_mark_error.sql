-- While retries remain the row keeps its status and shows the last error;
-- after the last attempt (or a permanent error) it is failed.
UPDATE inbox
SET last_error = @last_error,
    status = CASE WHEN @final THEN 'failed' ELSE status END
WHERE id = @id
