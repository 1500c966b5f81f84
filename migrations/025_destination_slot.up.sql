-- A destination's requests in flight are its slots: one row per slot of
-- max_in_flight, shared by every replica. A claim puts a send in a free
-- slot until claimed_until (its request's time and a margin), and
-- recording the outcome frees it; a slot whose holder died frees itself
-- when claimed_until passes, and its send is made again with the same
-- key.
--
-- Claims were columns of destination_send. Claiming then rewrote the
-- send's row and every one of its indexes (the claim's own index among
-- them) once more per request; with traffic at half the database's rate
-- that was the largest statement of sending. A slot's row is rewritten in
-- place instead: no column of it that changes is indexed, and the low
-- fill factor leaves its page room for the new version.
CREATE TABLE destination_slot (
    destination   text        NOT NULL,
    slot          integer     NOT NULL,
    send_id       bigint      NULL,
    holder        text        NULL, -- the sender's instance and claim, instance/n
    claimed_until timestamptz NOT NULL DEFAULT '-infinity',
    PRIMARY KEY (destination, slot)
) WITH (fillfactor = 10);

-- Sends claimed by the columns below when this migration runs are left
-- unclaimed: their requests' outcomes are not recorded, and the sends are
-- made again, with the same keys.
DROP INDEX destination_send_claimed_idx;
ALTER TABLE destination_send DROP COLUMN claimed_by, DROP COLUMN claimed_until;

-- An attempt's foreign key ran a lookup and took a share lock on its send
-- for every attempt recorded; the sender records an attempt only for a
-- send it claimed, and retention deletes a send's attempts with it
-- (internal/riverdb/sql/retention_related.sql).
ALTER TABLE destination_attempt DROP CONSTRAINT destination_attempt_send_id_fkey;

-- A claim takes the oldest due sends by (next_attempt_at, id); the due
-- index had only the due time, so the planner had to sort, and when its
-- statistics expected few due sends it read every pending send and sorted
-- them all for the few it took: 47 ms for a claim of 32 behind 61,857
-- pending sends. With id in the index the order is the index's, and a
-- claim reads only what it takes. Building the index reads
-- destination_send while holding its writes: with many sends kept,
-- `hookinbox migrate --prepare` builds it beforehand, CONCURRENTLY
-- (ahead/025_destination_send_due_order_idx.sql), and this migration finds
-- it there.
CREATE INDEX IF NOT EXISTS destination_send_due_order_idx
    ON destination_send (destination, next_attempt_at, id) WHERE state = 'pending';
DROP INDEX destination_send_due_idx;
