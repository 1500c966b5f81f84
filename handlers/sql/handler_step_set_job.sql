UPDATE handler_step SET job_id = @job_id WHERE key = @key
