INSERT INTO payment_saga (payment_intent, source, delivery_id, amount, currency, state, fulfill_key, refund_key)
VALUES (@payment_intent, @source, @delivery_id, @amount, @currency, 'fulfilling', @fulfill_key, @refund_key)
ON CONFLICT (payment_intent) DO NOTHING
