UPDATE inbox
SET status = 'processed', processed_at = now(), last_error = NULL
WHERE id = @id
