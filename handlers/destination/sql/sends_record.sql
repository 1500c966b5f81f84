-- Records the outcomes of a sender's requests on their sends, and ends
-- their claims. Only a pending send still claimed by the same claim moves:
-- one whose claim expired and was taken by another sender (a request that
-- outlived it) is left to that sender. RETURNING names the sends moved.
UPDATE destination_send s
SET state = v.state, attempts = s.attempts + v.attempted, stale = v.stale, last_status = v.last_status,
    last_error = v.last_error, next_attempt_at = v.next_attempt_at, claimed_by = NULL, claimed_until = NULL,
    finished_at = CASE WHEN v.state IN ('succeeded', 'failed', 'skipped') THEN now() ELSE NULL END
FROM unnest(@ids::bigint[], @holders::text[], @states::text[], @attempted::int[], @stales::bool[],
            @last_statuses::int[], @last_errors::text[], @next_attempt_ats::timestamptz[])
     AS v(id, holder, state, attempted, stale, last_status, last_error, next_attempt_at)
WHERE s.id = v.id AND s.state = 'pending' AND s.claimed_by = v.holder
RETURNING s.id
