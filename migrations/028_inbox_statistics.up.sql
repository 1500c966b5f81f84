-- ANALYZE reads a sample of 300 rows for each point of the largest
-- statistics target among a table's columns: 30,000 rows at the default
-- 100, which in the inbox and inbox_outcome partitions are 30,000 pages
-- each. The partition that takes new deliveries holds a day or more of
-- them, so autovacuum analyzes it again each time it grows by a tenth: in
-- the benchmark with 10,000,000 deliveries of history (bench/README.md,
-- "An inbox with history") one such analyze read 61,812 blocks in a
-- second, evicting the pages ingest works on, and the slowest acks of
-- the step followed it.
--
-- The planner asks little of these tables: partitions by id range, the
-- deliveries list by id with an event type, status or time, a resource's
-- deliveries by its key. Ten points per column describe that well enough,
-- and the sample becomes 3,000 rows. Columns no query filters on (digests,
-- ids that are unique by construction, error text) get none, like payload
-- and headers (migration 015; set again here for the overflow partition,
-- which migration 026 made without). Setting a column's target on a
-- partitioned table sets it on every partition; inbox_partition_create
-- copies the parent's targets to each new one. inbox_key is analyzed for
-- the id ranges retention deletes by, and for nothing else.
ALTER TABLE inbox
    ALTER COLUMN id SET STATISTICS 10,
    ALTER COLUMN source SET STATISTICS 10,
    ALTER COLUMN delivery_id SET STATISTICS 0,
    ALTER COLUMN event_type SET STATISTICS 10,
    ALTER COLUMN occurred_at SET STATISTICS 10,
    ALTER COLUMN headers SET STATISTICS 0,
    ALTER COLUMN payload SET STATISTICS 0,
    ALTER COLUMN payload_sha256 SET STATISTICS 0,
    ALTER COLUMN received_at SET STATISTICS 10,
    ALTER COLUMN origin SET STATISTICS 10,
    ALTER COLUMN body_key SET STATISTICS 0;
ALTER TABLE inbox_outcome
    ALTER COLUMN inbox_id SET STATISTICS 10,
    ALTER COLUMN source SET STATISTICS 10,
    ALTER COLUMN event_type SET STATISTICS 10,
    ALTER COLUMN received_at SET STATISTICS 10,
    ALTER COLUMN status SET STATISTICS 10,
    ALTER COLUMN processed_at SET STATISTICS 10,
    ALTER COLUMN resource_key SET STATISTICS 10,
    ALTER COLUMN stale SET STATISTICS 10,
    ALTER COLUMN last_error SET STATISTICS 0;
ALTER TABLE inbox_key
    ALTER COLUMN source SET STATISTICS 10,
    ALTER COLUMN delivery_id SET STATISTICS 0,
    ALTER COLUMN inbox_id SET STATISTICS 10,
    ALTER COLUMN payload_sha256 SET STATISTICS 0,
    ALTER COLUMN origin SET STATISTICS 10,
    ALTER COLUMN body_key SET STATISTICS 0;

-- As in migration 026, and each partition takes its parent's statistics
-- targets: LIKE does not copy them, nor does ATTACH.
CREATE OR REPLACE FUNCTION inbox_partition_create(lo bigint, hi bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    p text := 'inbox_p' || lo;
    o text := 'inbox_outcome_p' || lo;
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE inbox INCLUDING DEFAULTS INCLUDING STORAGE)', p);
    PERFORM inbox_partition_statistics('inbox', p);
    -- pg_attribute.attcompression exists from PostgreSQL 14 on.
    IF current_setting('server_version_num')::int >= 140000 THEN
        IF (SELECT attcompression FROM pg_attribute WHERE attrelid = 'inbox'::regclass AND attname = 'payload') = 'l' THEN
            EXECUTE format('ALTER TABLE %I ALTER COLUMN payload SET COMPRESSION lz4', p);
        END IF;
    END IF;
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (id >= %s AND id < %s)', p, p || '_range', lo, hi);
    EXECUTE format('ALTER TABLE inbox ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', p, lo, hi);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', p, p || '_range');

    EXECUTE format('CREATE TABLE %I (LIKE inbox_outcome INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', o);
    PERFORM inbox_partition_statistics('inbox_outcome', o);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (inbox_id >= %s AND inbox_id < %s)', o, o || '_range', lo, hi);
    EXECUTE format('ALTER TABLE inbox_outcome ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', o, lo, hi);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', o, o || '_range');
END
$$;

-- Gives table the statistics targets its parent's columns have.
CREATE FUNCTION inbox_partition_statistics(parent regclass, tbl text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    col record;
BEGIN
    FOR col IN
        SELECT attname, attstattarget FROM pg_attribute
        WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped AND attstattarget >= 0
    LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET STATISTICS %s', tbl, col.attname, col.attstattarget);
    END LOOP;
END
$$;
