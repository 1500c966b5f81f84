-- Moves the saga only from an expected state, so a re-run of a step never
-- moves it backwards or twice.
UPDATE payment_saga
SET state = @to_state, last_error = @last_error, updated_at = now()
WHERE payment_intent = @payment_intent AND state = ANY(@from_states)
