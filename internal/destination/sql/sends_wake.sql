-- A closed circuit: the sends that waited for it (their retries pushed
-- out while it was open) are due now, and go at the configured rate.
UPDATE destination_send SET next_attempt_at = now()
WHERE destination = @destination AND state = 'pending' AND next_attempt_at > now()
