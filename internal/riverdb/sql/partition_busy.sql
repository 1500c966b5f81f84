-- Whether the partition [@lo, @hi) holds a delivery retention keeps
-- (retention_inbox.sql) that a replay or an in-flight insert can have made
-- since the partition was judged: pending, failed, or with follow-up work
-- unfinished. Each reads an index or the small set of unfinished work
-- (the unfinished sends' partial index), so this runs while the inbox is
-- locked for the drop. A handler step is found from the unfinished jobs
-- (River's index on state, and the planner's count of each state: every
-- state but the finished three, named, which TestRiverJobStatesAreKnown
-- holds to River's list) through the step's job (migration 027) and its
-- delivery's key, which stays until the partition is dropped. Read from
-- the steps, or with every job filtered by state, it scanned a table that
-- holds a day of completed jobs or a month of steps while ingest waited
-- behind the lock.
SELECT EXISTS (SELECT 1 FROM inbox_pending WHERE inbox_id >= @lo AND inbox_id < @hi)
    OR EXISTS (SELECT 1 FROM inbox_outcome WHERE inbox_id >= @lo AND inbox_id < @hi AND status = 'failed')
    OR EXISTS (
        SELECT 1 FROM river_job j
        WHERE j.kind = 'process_delivery' AND j.state NOT IN ('completed', 'cancelled', 'discarded')
          AND (j.args->>'inbox_id')::bigint >= @lo AND (j.args->>'inbox_id')::bigint < @hi)
    OR EXISTS (
        SELECT 1 FROM river_job j
        JOIN handler_step s ON s.job_id = j.id
        JOIN inbox_key k ON k.source = s.source AND k.delivery_id = s.delivery_id
        WHERE j.state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
          AND k.inbox_id >= @lo AND k.inbox_id < @hi)
    OR EXISTS (
        SELECT 1 FROM destination_send d
        WHERE d.state IN ('waiting', 'pending', 'held') AND d.inbox_id >= @lo AND d.inbox_id < @hi)
