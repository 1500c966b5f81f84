-- inbox_key retires by generation. Retention dropped an expired inbox
-- partition in one statement, but then deleted its deliveries' keys row by
-- row, at a pace, for hours: about 100 µs of PostgreSQL's CPU a key beside
-- ingest, and the vacuum of every page after it (bench/README.md,
-- "Retention under ingest"). Now inbox_key is partitioned by ranges of the
-- inbox id too, a generation each: ids [lo, lo + 2^40), opened in turn as
-- the longest retention passes (internal/inbox/key_generations.go). A
-- generation is dropped whole once the inbox holds no delivery of its ids.
--
-- Each generation is unique on (source, delivery_id) and (source,
-- body_key), as inbox_key was; across generations ingest's insert looks
-- the key up in the others before it inserts
-- (internal/inbox/sql/inbox_insert.sql).
-- A look-up does not see a key another transaction has inserted and not
-- yet committed, so two inserts of one key must never fall in two
-- generations at once: every ingest transaction holds a shared lock (the
-- generations' fence, internal/inbox/sql/key_fence.sql), and a new
-- generation is opened under that lock taken exclusively, which waits for every insert
-- in flight. Two transactions that hold the fence together insert into the
-- same generation, whose unique index decides between them; one that took
-- it after another committed sees that one's key.
--
-- The existing table becomes the first generation: every id below a
-- multiple of 2^40 at least 2^39 ids ahead of the sequence, so that the
-- ids handed out until the next generation opens stay below it. Attaching
-- it needs a valid CHECK constraint of that bound, or a scan of every key
-- while ingest waits: `hookinbox migrate --prepare` adds the constraint
-- here (a moment's lock) and validates it beforehand
-- (ahead/032_inbox_key_below_validate.sql), without holding writes.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'inbox_key'::regclass AND conname = 'inbox_key_below') THEN
        EXECUTE format('ALTER TABLE inbox_key ADD CONSTRAINT inbox_key_below CHECK (inbox_id < %s) NOT VALID',
            ((SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM inbox_id_seq) / 1099511627776 + 1) * 1099511627776
            + CASE WHEN (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM inbox_id_seq) % 1099511627776 >= 549755813888
                   THEN 1099511627776 ELSE 0 END);
    END IF;
END
$$;

-- ahead: end

LOCK TABLE inbox_key IN ACCESS EXCLUSIVE MODE;
-- Nothing to do when --prepare validated it.
ALTER TABLE inbox_key VALIDATE CONSTRAINT inbox_key_below;

DO $$
DECLARE
    below bigint := substring((SELECT pg_get_constraintdef(oid) FROM pg_constraint
                               WHERE conrelid = 'inbox_key'::regclass AND conname = 'inbox_key_below')
                              FROM 'inbox_id < \(?''?(\d+)')::bigint;
BEGIN
    PERFORM set_config('hookinbox.inbox_key_below', below::text, true);
END
$$;

ALTER TABLE inbox_key RENAME TO inbox_key_g0;
ALTER INDEX inbox_key_pkey RENAME TO inbox_key_g0_pkey;
ALTER INDEX inbox_key_body_key_idx RENAME TO inbox_key_g0_body_key_idx;
-- It found a dropped partition's keys to delete; nothing deletes them now.
DROP INDEX inbox_key_inbox_id_brin;

CREATE TABLE inbox_key (
    source         text   NOT NULL,
    delivery_id    text   NOT NULL,
    inbox_id       bigint NOT NULL,
    payload_sha256 bytea  NOT NULL,
    origin         text   NOT NULL,
    body_key       bytea  NULL
) PARTITION BY RANGE (inbox_id);
ALTER TABLE inbox_key
    ALTER COLUMN source SET STATISTICS 10,
    ALTER COLUMN delivery_id SET STATISTICS 0,
    ALTER COLUMN inbox_id SET STATISTICS 10,
    ALTER COLUMN payload_sha256 SET STATISTICS 0,
    ALTER COLUMN origin SET STATISTICS 10,
    ALTER COLUMN body_key SET STATISTICS 0;

DO $$
BEGIN
    EXECUTE format('ALTER TABLE inbox_key ATTACH PARTITION inbox_key_g0 FOR VALUES FROM (MINVALUE) TO (%s)',
                   current_setting('hookinbox.inbox_key_below'));
END
$$;
ALTER TABLE inbox_key_g0 DROP CONSTRAINT inbox_key_below;

-- The generations, oldest first: ids [lo, hi), and when the ids began to
-- be handed out in it (NULL for one made and not yet opened).
CREATE TABLE inbox_key_generation (
    lo        bigint      PRIMARY KEY,
    hi        bigint      NOT NULL,
    opened_at timestamptz NULL
);
INSERT INTO inbox_key_generation (lo, hi, opened_at)
VALUES (-9223372036854775808, current_setting('hookinbox.inbox_key_below')::bigint, now());
SELECT inbox_partition_vacuum('inbox_key_g0');

-- Makes the generation of ids [lo, hi), not yet opened. Made apart and
-- attached with a CHECK constraint, like an inbox partition, so that
-- nothing waits while it is built.
CREATE FUNCTION inbox_key_generation_create(lo bigint, hi bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    g text := 'inbox_key_g' || lo;
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE inbox_key INCLUDING DEFAULTS)', g);
    PERFORM inbox_partition_statistics('inbox_key', g);
    PERFORM inbox_partition_vacuum(g);
    EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (source, delivery_id)', g);
    EXECUTE format('CREATE UNIQUE INDEX %I ON %I (source, body_key) WHERE body_key IS NOT NULL', g || '_body_key_idx', g);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (inbox_id >= %s AND inbox_id < %s)', g, g || '_range', lo, hi);
    EXECUTE format('ALTER TABLE inbox_key ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', g, lo, hi);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', g, g || '_range');
    INSERT INTO inbox_key_generation (lo, hi) VALUES (lo, hi);
END
$$;

-- Dropped partitions' keys were deleted from here at a pace; those left
-- now go with the first generation.
DROP TABLE inbox_retired;
