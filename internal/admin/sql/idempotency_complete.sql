-- Only the lock holder completes: a request that lost its lock to a
-- takeover updates nothing.
UPDATE api_idempotency
SET state = 'completed', status_code = @status_code, response_body = @response_body,
    lock_token = NULL, locked_until = NULL
WHERE scope = @scope AND operation = @operation AND idempotency_key = @key
  AND state = 'in_progress' AND lock_token = @lock_token
