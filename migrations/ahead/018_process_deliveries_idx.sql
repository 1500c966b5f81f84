-- migrations/018_process_deliveries.up.sql: the index of batch jobs by
-- their range of inbox ids, built without holding River's job writes.
CREATE INDEX CONCURRENTLY IF NOT EXISTS river_job_process_deliveries_inbox_range_idx ON river_job
    USING gist (int8range((args->'inbox_ids'->>0)::bigint, (args->'inbox_ids'->>(-1))::bigint, '[]'))
    WHERE kind = 'process_deliveries'
