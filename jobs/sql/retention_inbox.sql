-- One batch of expired deliveries, oldest first through the received_at
-- index. (source = ANY(@sources)) = @include selects either the listed
-- sources or every other one. Rows not yet handled (received) or given up
-- on (failed) are kept: retention never deletes work.
WITH doomed AS (
    SELECT id FROM inbox
    WHERE received_at < @cutoff
      AND (source = ANY(@sources)) = @include
      AND status IN ('processed', 'skipped')
    ORDER BY received_at
    LIMIT @batch
)
DELETE FROM inbox i USING doomed WHERE i.id = doomed.id
