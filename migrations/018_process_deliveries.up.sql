-- A process_deliveries job (jobs.ProcessDeliveriesArgs) processes a batch
-- of deliveries: its args hold their inbox ids in ascending order. A
-- delivery's jobs are then its process_delivery jobs (the original, its
-- replays, a retry split off a batch) and the batch job that held it.
--
-- The index finds the batch job of a delivery by the range of its ids: one
-- entry per batch, not per delivery, so ingest pays for it once a batch.
-- The containment check on the array then decides (batches that ran
-- concurrently have overlapping ranges). Before this version there is no
-- such job, so the index starts empty, but building it reads river_job
-- while holding its writes (every job insert and completion): with many
-- jobs kept (retention.river_completed), `hookinbox migrate --prepare`
-- builds it beforehand, CONCURRENTLY (ahead/018_process_deliveries_idx.sql),
-- and this migration finds it there.
CREATE INDEX IF NOT EXISTS river_job_process_deliveries_inbox_range_idx ON river_job
    USING gist (int8range((args->'inbox_ids'->>0)::bigint, (args->'inbox_ids'->>(-1))::bigint, '[]'))
    WHERE kind = 'process_deliveries';

-- The ids of every processing job of the inbox row inbox_id, in no order
-- (callers sort them; a delivery is in at most one batch job, which
-- precedes the others).
CREATE FUNCTION delivery_job_ids(inbox_id bigint) RETURNS SETOF bigint
LANGUAGE sql STABLE AS $$
    SELECT id FROM river_job
    WHERE kind = 'process_deliveries'
      AND int8range((args->'inbox_ids'->>0)::bigint, (args->'inbox_ids'->>(-1))::bigint, '[]') @> inbox_id
      AND args->'inbox_ids' @> to_jsonb(inbox_id)
    UNION ALL
    SELECT id FROM river_job
    WHERE kind = 'process_delivery' AND (args->>'inbox_id')::bigint = inbox_id
$$;
