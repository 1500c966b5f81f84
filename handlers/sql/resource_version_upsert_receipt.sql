-- Moves resources' receipt-clock versions forward, never back: for events
-- that carry no ordering time of their own. One row or a batch's, as
-- resource_version_upsert.sql.
INSERT INTO resource_version AS v (source, resource_key, receipt_applied_at, delivery_id)
SELECT * FROM unnest(@sources::text[], @resource_keys::text[], @received_ats::timestamptz[], @delivery_ids::text[])
ON CONFLICT (source, resource_key) DO UPDATE
SET receipt_applied_at = EXCLUDED.receipt_applied_at, delivery_id = EXCLUDED.delivery_id, updated_at = now()
WHERE v.receipt_applied_at IS NULL OR v.receipt_applied_at <= EXCLUDED.receipt_applied_at
