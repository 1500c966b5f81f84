-- Moves resources' provider-clock versions forward, never back: by
-- ordering time, ties broken by receipt time (a row from before receipt
-- times were kept loses ties). One row for a delivery processed alone, a
-- processing batch's resources at once otherwise: a batch never holds two
-- deliveries of one resource (the second goes alone), so no row is
-- touched twice.
INSERT INTO resource_version AS v (source, resource_key, applied_at, applied_received_at, delivery_id)
SELECT * FROM unnest(@sources::text[], @resource_keys::text[], @applied_ats::timestamptz[],
                     @received_ats::timestamptz[], @delivery_ids::text[])
ON CONFLICT (source, resource_key) DO UPDATE
SET applied_at = EXCLUDED.applied_at, applied_received_at = EXCLUDED.applied_received_at,
    delivery_id = EXCLUDED.delivery_id, updated_at = now()
WHERE v.applied_at IS NULL
   OR (v.applied_at, coalesce(v.applied_received_at, '-infinity'))
      <= (EXCLUDED.applied_at, EXCLUDED.applied_received_at)
