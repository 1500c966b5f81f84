UPDATE inbox
SET status = @status, processed_at = now(), last_error = NULL
WHERE id = @id
