-- A waiting or reset send becomes due now.
UPDATE destination_send SET state = 'pending', next_attempt_at = now() WHERE id = @id
