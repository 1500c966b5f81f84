-- What an outdated process, which fetches no processing job, looks at to
-- tell whether the newer processes take them: whether one in @queue has
-- been due for longer than @due_secs, and whether one is running.
SELECT EXISTS (
           SELECT 1 FROM river_job
           WHERE state = 'available' AND queue = @queue
             AND scheduled_at < now() - @due_secs::float8 * interval '1 second'
       ),
       EXISTS (SELECT 1 FROM river_job WHERE state = 'running' AND queue = @queue)
