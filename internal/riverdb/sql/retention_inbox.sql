-- One batch of expired deliveries, oldest first through the received_at
-- index. (source = ANY(@sources)) = @include selects either the listed
-- sources or every other one. Ids in [@skip_from, @skip_to) are in
-- partitions retention will drop whole once they expire
-- (partitions_retire.go); should one take long to expire (traffic fell),
-- its deliveries received before @skip_after are deleted here all the
-- same. Each delivery's key and replay records go with it. Retention never deletes work:
--   - rows not yet handled (received) or given up on (failed) are kept;
--   - so are handled rows whose follow-up work is unfinished: a step a
--     handler enqueued once (handler_step: fulfillments, refunds) or a
--     queued replay, whose job is not completed, cancelled or discarded,
--     or a destination send not yet succeeded or failed. Such work may
--     retry for days and needs the row (its payload, its derived keys).
--   A batch's process_deliveries job needs no such check: it completes in
--   the transaction that records its deliveries' outcomes, so a delivery
--   still in an unfinished batch job has no outcome yet (unless a replay
--   decided it first; the batch job then finds the row gone and skips it).
WITH doomed AS (
    SELECT i.id, i.source, i.delivery_id FROM inbox i
    WHERE i.received_at < @cutoff
      AND (i.source = ANY(@sources)) = @include
      AND NOT (i.id >= @skip_from AND i.id < @skip_to AND i.received_at >= @skip_after)
      AND EXISTS (SELECT 1 FROM inbox_outcome o WHERE o.inbox_id = i.id AND o.status IN ('processed', 'skipped'))
      AND NOT EXISTS (
          SELECT 1 FROM handler_step s JOIN river_job j ON j.id = s.job_id
          WHERE s.source = i.source AND s.delivery_id = i.delivery_id
            AND j.state NOT IN ('completed', 'cancelled', 'discarded'))
      AND NOT EXISTS (
          SELECT 1 FROM river_job j
          WHERE j.kind = 'process_delivery' AND (j.args->>'inbox_id')::bigint = i.id
            AND j.state NOT IN ('completed', 'cancelled', 'discarded'))
      AND NOT EXISTS (
          SELECT 1 FROM destination_send d
          WHERE d.source = i.source AND d.delivery_id = i.delivery_id AND d.state IN ('waiting', 'pending', 'held'))
    ORDER BY i.received_at
    LIMIT @batch
), outcomes AS (
    DELETE FROM inbox_outcome o USING doomed WHERE o.inbox_id = doomed.id
), keys AS (
    DELETE FROM inbox_key k USING doomed
    WHERE k.source = doomed.source AND k.delivery_id = doomed.delivery_id AND k.inbox_id = doomed.id
), replays AS (
    DELETE FROM replay r USING doomed WHERE r.inbox_id = doomed.id
)
DELETE FROM inbox i USING doomed WHERE i.id = doomed.id
