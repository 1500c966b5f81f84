-- One batch of expired conflict records, oldest first.
DELETE FROM delivery_conflict
WHERE id IN (SELECT id FROM delivery_conflict WHERE received_at < @cutoff ORDER BY received_at LIMIT @batch)
