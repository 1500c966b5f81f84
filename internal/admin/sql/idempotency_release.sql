-- A request that failed on our side gives its key back so a retry runs.
DELETE FROM api_idempotency
WHERE scope = @scope AND operation = @operation AND idempotency_key = @key
  AND state = 'in_progress' AND lock_token = @lock_token
