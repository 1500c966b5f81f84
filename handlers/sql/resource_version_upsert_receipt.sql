-- Moves a resource's receipt-clock version forward, never back: for events
-- that carry no ordering time of their own.
INSERT INTO resource_version AS v (source, resource_key, receipt_applied_at, delivery_id)
VALUES (@source, @resource_key, @received_at, @delivery_id)
ON CONFLICT (source, resource_key) DO UPDATE
SET receipt_applied_at = EXCLUDED.receipt_applied_at, delivery_id = EXCLUDED.delivery_id, updated_at = now()
WHERE v.receipt_applied_at IS NULL OR v.receipt_applied_at <= EXCLUDED.receipt_applied_at
