-- Records a request's outcome on its send. Only a pending send moves: a run
-- that finds it already decided (by a run River gave the job to after
-- taking this one for stuck) changes nothing.
UPDATE destination_send
SET state = @state, attempts = attempts + @attempted, stale = @stale, last_status = @last_status,
    last_error = @last_error,
    finished_at = CASE WHEN @state IN ('succeeded', 'failed', 'skipped') THEN now() ELSE NULL END
WHERE id = @id AND state = 'pending'
