-- The natural key decides: an entry booked by an earlier run makes this a
-- no-op, and RETURNING yields nothing.
INSERT INTO ledger (payment_intent, kind, reference, amount, currency, source, delivery_id)
VALUES (@payment_intent, @kind, @reference, @amount, @currency, @source, @delivery_id)
ON CONFLICT ON CONSTRAINT ledger_natural_key DO NOTHING
RETURNING id
