-- Moves the saga only from an expected state, so a re-run of a step never
-- moves it backwards or twice. A saga moved to failed records the step it
-- was waiting on.
UPDATE payment_saga
SET state = @to_state, last_error = @last_error, updated_at = now(),
    failed_step = CASE WHEN @to_state = 'failed' THEN
                      CASE state WHEN 'fulfilling' THEN 'fulfill' WHEN 'refunding' THEN 'refund' END
                  END
WHERE payment_intent = @payment_intent AND state = ANY(@from_states)
