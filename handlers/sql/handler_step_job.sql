SELECT job_id FROM handler_step WHERE key = @key
