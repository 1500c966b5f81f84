-- Moves a saga that failed at a step back to waiting on it. The row lock
-- decides between concurrent replays: the first moves it, the others find
-- it no longer failed and move nothing. last_error stays until the step's
-- next result.
UPDATE payment_saga
SET state = CASE failed_step WHEN 'fulfill' THEN 'fulfilling' ELSE 'refunding' END,
    failed_step = NULL, updated_at = now()
WHERE payment_intent = @payment_intent AND state = 'failed'
RETURNING CASE state WHEN 'fulfilling' THEN 'fulfill' ELSE 'refund' END,
          source, delivery_id, amount, currency, fulfill_key, refund_key
