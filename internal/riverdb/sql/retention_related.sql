-- What lives and dies with a source's deliveries: the derived-key steps,
-- resource versions, finished destination sends and their attempts, and
-- idle ordered-route turns. One batch of each. A step whose job
-- is still unfinished is kept, like its delivery (retention_inbox.sql): it
-- is what stops a replay from enqueueing the step a second time.
WITH steps AS (
    DELETE FROM handler_step
    WHERE key IN (SELECT s.key FROM handler_step s
                  WHERE s.created_at < @cutoff AND (s.source = ANY(@sources)) = @include
                    AND NOT EXISTS (SELECT 1 FROM river_job j
                                    WHERE j.id = s.job_id
                                      AND j.state NOT IN ('completed', 'cancelled', 'discarded'))
                  LIMIT @batch)
    RETURNING 1
), versions AS (
    DELETE FROM resource_version
    WHERE (source, resource_key) IN (SELECT source, resource_key FROM resource_version
                                     WHERE updated_at < @cutoff AND (source = ANY(@sources)) = @include
                                     LIMIT @batch)
    RETURNING 1
), sends AS (
    DELETE FROM destination_send
    WHERE id IN (SELECT id FROM destination_send
                 WHERE created_at < @cutoff AND (source = ANY(@sources)) = @include
                   AND state IN ('succeeded', 'failed', 'skipped')
                 LIMIT @batch)
    RETURNING id
), attempts AS (
    DELETE FROM destination_attempt WHERE send_id IN (SELECT id FROM sends)
), turns AS (
    DELETE FROM destination_resource
    WHERE (destination, source, resource_key) IN (SELECT destination, source, resource_key FROM destination_resource
                                                  WHERE updated_at < @cutoff AND (source = ANY(@sources)) = @include
                                                    AND NOT busy
                                                  LIMIT @batch)
      -- Again on the row itself: a row a send's turn took while this
      -- waited for its lock is read anew here, not in the subquery.
      AND NOT busy AND updated_at < @cutoff
    RETURNING 1
)
SELECT (SELECT count(*) FROM steps) + (SELECT count(*) FROM versions) + (SELECT count(*) FROM sends) + (SELECT count(*) FROM turns)
