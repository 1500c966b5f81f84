-- Expired rows retention keeps (retention_inbox.sql): not handled yet,
-- failed, or handled with follow-up work unfinished.
SELECT count(*)
FROM inbox i
WHERE i.received_at < @cutoff
  AND (i.source = ANY(@sources)) = @include
  AND (NOT EXISTS (SELECT 1 FROM inbox_outcome o WHERE o.inbox_id = i.id AND o.status IN ('processed', 'skipped'))
       OR EXISTS (
          SELECT 1 FROM handler_step s JOIN river_job j ON j.id = s.job_id
          WHERE s.source = i.source AND s.delivery_id = i.delivery_id
            AND j.state NOT IN ('completed', 'cancelled', 'discarded'))
       OR EXISTS (
          SELECT 1 FROM river_job j
          WHERE j.kind = 'process_delivery' AND (j.args->>'inbox_id')::bigint = i.id
            AND j.state NOT IN ('completed', 'cancelled', 'discarded'))
       OR EXISTS (
          SELECT 1 FROM destination_send d
          WHERE d.source = i.source AND d.delivery_id = i.delivery_id AND d.state IN ('waiting', 'pending', 'held')))
