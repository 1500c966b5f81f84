-- Every request a flush recorded, for operators.
INSERT INTO destination_attempt (send_id, attempt, attempted_at, duration_ms, status, error, response, stale, probe)
SELECT * FROM unnest(@send_ids::bigint[], @attempts::int[], @attempted_ats::timestamptz[], @duration_ms::int[],
                     @statuses::int[], @errors::text[], @responses::text[], @stales::bool[], @probes::bool[])
