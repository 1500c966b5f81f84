INSERT INTO resource_version (source, resource_key, applied_at, delivery_id)
VALUES (@source, @resource_key, @applied_at, @delivery_id)
ON CONFLICT (source, resource_key) DO UPDATE
SET applied_at = EXCLUDED.applied_at, delivery_id = EXCLUDED.delivery_id, updated_at = now()
WHERE resource_version.applied_at <= EXCLUDED.applied_at
