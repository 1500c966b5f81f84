UPDATE inbox
SET status = @status, resource_key = @resource_key, processed_at = now(), last_error = NULL
WHERE id = @id
