-- Keeps inbox_key whole from now until migration 026 takes over, while the
-- inbox of an older version still decides duplicates by its own unique
-- constraints: every statement that stores deliveries adds their keys,
-- every statement that deletes deliveries (retention, by batches) takes
-- theirs away. With these in place, the copy of the keys that were there
-- before (026_inbox_key_copy.sql) can take as long as it needs.
--
-- The copy reads rows it does not lock (locking them would rewrite every
-- page of the inbox), so a delete may remove a row the copy has read and
-- not yet inserted the key of. Until the copy is finished, a delete
-- therefore leaves a tombstone: its key with the id negated and no body
-- key, inserted or made of the key that was there. The key's unique index
-- orders the two: whichever inserts second waits for the first to commit,
-- and a copied key never replaces a tombstone. The copy removes the
-- tombstones when it is done, and the migration any made after.
--
-- Statement triggers read the rows a statement changed from its
-- transition table: one insert of the keys for a batch of deliveries.
CREATE OR REPLACE FUNCTION inbox_key_follow_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- A delivery stored again after its row was deleted takes its
    -- tombstone's place. Any other conflict is a key left by hand, and
    -- ingest must not fail for it.
    INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin, body_key)
    SELECT source, delivery_id, id, payload_sha256, origin, body_key FROM stored
    ON CONFLICT (source, delivery_id) DO UPDATE
        SET inbox_id = EXCLUDED.inbox_id, payload_sha256 = EXCLUDED.payload_sha256,
            origin = EXCLUDED.origin, body_key = EXCLUDED.body_key
        WHERE inbox_key.inbox_id < 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION inbox_key_follow_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Once the copy is finished (and so no longer runs), the keys are
    -- simply deleted.
    IF obj_description('inbox_key'::regclass, 'pg_class') = 'hookinbox: every key of the inbox' THEN
        DELETE FROM inbox_key k USING gone g
        WHERE k.source = g.source AND k.delivery_id = g.delivery_id AND k.inbox_id = g.id;
    ELSE
        INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin, body_key)
        SELECT source, delivery_id, -id, payload_sha256, origin, NULL FROM gone
        ON CONFLICT (source, delivery_id) DO UPDATE SET inbox_id = EXCLUDED.inbox_id, body_key = NULL
            WHERE inbox_key.inbox_id = -EXCLUDED.inbox_id;
    END IF;
    RETURN NULL;
END
$$;

-- Made once: running Prepare again takes no lock of the inbox here
-- (CREATE TRIGGER waits for every write under way, and holds new ones).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'inbox'::regclass AND tgname = 'inbox_key_follow_insert') THEN
        CREATE TRIGGER inbox_key_follow_insert AFTER INSERT ON inbox
            REFERENCING NEW TABLE AS stored FOR EACH STATEMENT EXECUTE FUNCTION inbox_key_follow_insert();
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'inbox'::regclass AND tgname = 'inbox_key_follow_delete') THEN
        CREATE TRIGGER inbox_key_follow_delete AFTER DELETE ON inbox
            REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION inbox_key_follow_delete();
    END IF;
END
$$;
