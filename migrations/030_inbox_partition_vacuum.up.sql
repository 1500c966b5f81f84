-- Autovacuum visits an inbox partition after every 100,000 deliveries
-- inserted into it, however large it has grown. By default it waits for
-- a fifth of the table to be new (autovacuum_vacuum_insert_scale_factor
-- 0.2): the partition that takes a day's deliveries, a million or more,
-- was vacuumed once every few hundred thousand inserts, each round
-- reading back gigabytes of pages long since written out, to mark them
-- all-visible and write them again. In the benchmark's retention run
-- (bench/README.md, "Retention under ingest") the rounds on a partition
-- of 5,000,000 deliveries, heap and TOAST, were where ingest's slowest
-- acks came from. A round every 100,000 inserts finds the pages it marks
-- still in shared_buffers or the kernel's cache: the same work, in small
-- steps, while it is cheap. The partitions are inserted into and seldom
-- changed, so a round seldom has an index to scan.
--
-- Storage parameters are set on each partition (a partitioned table takes
-- none), here on those that exist, which holds no writes, and by
-- inbox_partition_create on each new one.
CREATE FUNCTION inbox_partition_vacuum(tbl text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('ALTER TABLE %I SET (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 100000, '
                   'toast.autovacuum_vacuum_insert_scale_factor = 0, toast.autovacuum_vacuum_insert_threshold = 100000)', tbl);
END
$$;

SELECT inbox_partition_vacuum(c.relname)
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent IN ('inbox'::regclass, 'inbox_outcome'::regclass);

-- As in migration 028, and each partition gets the settings above.
CREATE OR REPLACE FUNCTION inbox_partition_create(lo bigint, hi bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    p text := 'inbox_p' || lo;
    o text := 'inbox_outcome_p' || lo;
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE inbox INCLUDING DEFAULTS INCLUDING STORAGE)', p);
    PERFORM inbox_partition_statistics('inbox', p);
    PERFORM inbox_partition_vacuum(p);
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
    PERFORM inbox_partition_vacuum(o);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (inbox_id >= %s AND inbox_id < %s)', o, o || '_range', lo, hi);
    EXECUTE format('ALTER TABLE inbox_outcome ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', o, lo, hi);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', o, o || '_range');
END
$$;
