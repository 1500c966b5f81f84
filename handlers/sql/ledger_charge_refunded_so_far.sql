-- The cumulative refunded amount already booked for one charge: its
-- charge_refunded entries' references are "<charge id>:<cumulative amount>".
SELECT COALESCE(max(split_part(reference, ':', 2)::bigint), 0)
FROM ledger
WHERE payment_intent = @payment_intent
  AND kind = 'charge_refunded'
  AND split_part(reference, ':', 1) = @charge
