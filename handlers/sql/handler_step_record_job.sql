-- Records the job that now runs a step, recording the step too if
-- retention deleted its row.
INSERT INTO handler_step (key, source, delivery_id, handler, step, job_id)
VALUES (@key, @source, @delivery_id, @handler, @step, @job_id)
ON CONFLICT (key) DO UPDATE SET job_id = EXCLUDED.job_id
