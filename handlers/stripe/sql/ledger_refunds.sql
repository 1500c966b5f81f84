-- What a payment intent's ledger says about its refunds, read under its
-- ledger lock: the amount debited in all, by the saga's refund and by
-- charge.refunded events; the newest cumulative refunded amount booked for
-- @charge; and the sum of the newest cumulative amounts of its other
-- charges. charge_refunded references are "<charge id>:<cumulative amount>".
WITH charges AS (
    SELECT split_part(reference, ':', 1) AS charge, max(split_part(reference, ':', 2)::bigint) AS cumulative
    FROM ledger
    WHERE payment_intent = @payment_intent AND kind = 'charge_refunded'
    GROUP BY 1
)
SELECT
    (SELECT COALESCE(-sum(amount), 0) FROM ledger
     WHERE payment_intent = @payment_intent AND kind IN ('refund', 'charge_refunded'))::bigint,
    (SELECT COALESCE(max(cumulative), 0) FROM charges WHERE charge = @charge)::bigint,
    (SELECT COALESCE(sum(cumulative), 0) FROM charges WHERE charge <> @charge)::bigint
