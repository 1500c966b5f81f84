-- Destinations are sent by a sender per destination in every worker
-- process, in batches, instead of by one River job per send: a sender
-- claims the due sends it can make (within max_in_flight and rate_limit,
-- counted across replicas from the claims themselves), makes the requests
-- concurrently and records their outcomes in one transaction.
--
-- A pending send is due at next_attempt_at. A claim (claimed_by,
-- claimed_until) is what keeps a second sender from making the same send
-- at the same time; it expires on its own when its holder died, and the
-- send is then made again with the same key.
ALTER TABLE destination_send
    ADD COLUMN next_attempt_at timestamptz NULL,
    ADD COLUMN claimed_by      text        NULL,
    ADD COLUMN claimed_until   timestamptz NULL;

-- A paused destination now simply claims nothing, so held sends are
-- pending again; sends that had a job are due now.
UPDATE destination_send SET state = 'pending', next_attempt_at = now(), job_id = NULL
WHERE state IN ('pending', 'held');

-- What a sender claims next: the due sends of its destination.
CREATE INDEX destination_send_due_idx ON destination_send (destination, next_attempt_at)
    WHERE state = 'pending';
-- The requests in flight, counted per destination (max_in_flight).
CREATE INDEX destination_send_claimed_idx ON destination_send (destination, claimed_until)
    WHERE claimed_until IS NOT NULL;

-- A sender that found every slot taken by others' claims says so, and
-- the senders holding them leave it one: a busy sender, which claims
-- again in the transaction that records its outcomes, would otherwise
-- keep every slot.
ALTER TABLE destination_state
    ADD COLUMN wanted_by    text        NULL,
    ADD COLUMN wanted_until timestamptz NULL;

-- Slots were leased per request; the claims replace them.
DROP TABLE destination_lease;

-- The send and resume jobs are gone: a job of those kinds left unfinished
-- by an older version would only fail (no worker takes it).
DO $$
BEGIN
    IF to_regclass('river_job') IS NOT NULL THEN
        DELETE FROM river_job
        WHERE kind IN ('destination_send', 'destination_resume')
          AND state NOT IN ('completed', 'cancelled', 'discarded');
    END IF;
END $$;
