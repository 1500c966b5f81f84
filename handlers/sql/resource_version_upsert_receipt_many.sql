-- resource_version_upsert_receipt.sql for a processing batch's resources
-- at once (resource_version_upsert_many.sql).
INSERT INTO resource_version AS v (source, resource_key, receipt_applied_at, delivery_id)
SELECT * FROM unnest(@sources::text[], @resource_keys::text[], @received_ats::timestamptz[], @delivery_ids::text[])
ON CONFLICT (source, resource_key) DO UPDATE
SET receipt_applied_at = EXCLUDED.receipt_applied_at, delivery_id = EXCLUDED.delivery_id, updated_at = now()
WHERE v.receipt_applied_at IS NULL OR v.receipt_applied_at <= EXCLUDED.receipt_applied_at
