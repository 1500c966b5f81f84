-- A failed saga records the step that failed, so that a replay of its
-- delivery can resume that step with the same derived key. Sagas failed
-- before this migration failed at the refund if its step was recorded (the
-- saga moves to refunding in the transaction that records it), else at
-- the fulfillment.
ALTER TABLE payment_saga ADD COLUMN failed_step text NULL CHECK (failed_step IN ('fulfill', 'refund'));

UPDATE payment_saga s
SET failed_step = CASE WHEN EXISTS (SELECT 1 FROM handler_step WHERE key = s.refund_key) THEN 'refund' ELSE 'fulfill' END
WHERE state = 'failed';

ALTER TABLE payment_saga ADD CONSTRAINT payment_saga_failed_step
    CHECK ((state = 'failed') = (failed_step IS NOT NULL));

-- The sweep looks for sagas waiting on a step: few rows among all sagas.
CREATE INDEX payment_saga_waiting_idx ON payment_saga (payment_intent)
    WHERE state IN ('fulfilling', 'refunding');
