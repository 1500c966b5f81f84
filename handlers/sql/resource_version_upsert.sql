-- Moves a resource's provider-clock version forward, never back: by
-- ordering time, ties broken by receipt time (a row from before receipt
-- times were kept loses ties).
INSERT INTO resource_version AS v (source, resource_key, applied_at, applied_received_at, delivery_id)
VALUES (@source, @resource_key, @applied_at, @received_at, @delivery_id)
ON CONFLICT (source, resource_key) DO UPDATE
SET applied_at = EXCLUDED.applied_at, applied_received_at = EXCLUDED.applied_received_at,
    delivery_id = EXCLUDED.delivery_id, updated_at = now()
WHERE v.applied_at IS NULL
   OR (v.applied_at, coalesce(v.applied_received_at, '-infinity'))
      <= (EXCLUDED.applied_at, EXCLUDED.applied_received_at)
