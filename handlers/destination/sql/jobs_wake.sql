-- Makes a destination's waiting send jobs (snoozed while it was paused or
-- its circuit open) runnable now. A snooze shorter than River's scheduler
-- interval leaves a job available with a future scheduled_at, a longer one
-- scheduled. River has no bulk "run now", and JobRetry would take one
-- statement per job.
UPDATE river_job SET state = 'available', scheduled_at = now()
WHERE id IN (SELECT job_id FROM destination_send WHERE destination = @destination AND state = 'pending' AND job_id IS NOT NULL)
  AND state IN ('scheduled', 'available')
  AND scheduled_at > now()
