-- Every request a flush recorded, for operators. A flush recorded @again
-- (its last try failed, maybe after its commit) adds only the attempts
-- not there yet: a request is one attempt of its send, started at its
-- time.
INSERT INTO destination_attempt (send_id, attempt, attempted_at, duration_ms, status, error, response, stale, probe)
SELECT * FROM unnest(@send_ids::bigint[], @attempts::int[], @attempted_ats::timestamptz[], @duration_ms::int[],
                     @statuses::int[], @errors::text[], @responses::text[], @stales::bool[], @probes::bool[])
    AS v(send_id, attempt, attempted_at, duration_ms, status, error, response, stale, probe)
WHERE NOT @again::boolean
   OR NOT EXISTS (SELECT 1 FROM destination_attempt a
                  WHERE a.send_id = v.send_id AND a.attempt = v.attempt AND a.attempted_at = v.attempted_at)
