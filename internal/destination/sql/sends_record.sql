-- Records the outcomes of a sender's requests on their sends, and frees
-- their slots. Only a pending send whose slot still holds this claim
-- moves: one whose claim expired and whose slot went to another claim (a
-- request that outlived it) is due again, or made already, by another
-- sender. RETURNING names the sends moved.
WITH v AS (
    SELECT * FROM unnest(@ids::bigint[], @slots::int[], @holders::text[], @states::text[], @attempted::int[],
                         @stales::bool[], @last_statuses::int[], @last_errors::text[], @next_attempt_ats::timestamptz[])
        AS v(id, slot, holder, state, attempted, stale, last_status, last_error, next_attempt_at)
), freed AS (
    UPDATE destination_slot sl SET send_id = NULL, holder = NULL, claimed_until = '-infinity'
    FROM v
    WHERE sl.destination = @destination AND sl.slot = v.slot AND sl.send_id = v.id AND sl.holder = v.holder
    RETURNING v.id AS send_id
)
UPDATE destination_send s
SET state = v.state, attempts = s.attempts + v.attempted, stale = v.stale, last_status = v.last_status,
    last_error = v.last_error, next_attempt_at = v.next_attempt_at,
    finished_at = CASE WHEN v.state IN ('succeeded', 'failed', 'skipped') THEN now() ELSE NULL END
FROM v JOIN freed f ON f.send_id = v.id
WHERE s.id = v.id AND s.state = 'pending'
RETURNING s.id
