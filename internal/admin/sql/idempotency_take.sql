-- Takes a row over: an expired key starts afresh; an in-progress row whose
-- lock ran out (its request's process died) gets a new holder.
UPDATE api_idempotency
SET request_hash = @request_hash, state = 'in_progress', lock_token = @lock_token,
    status_code = NULL, response_body = NULL,
    locked_until = now() + make_interval(secs => @lock_secs),
    expires_at = CASE WHEN @renew THEN now() + make_interval(secs => @ttl_secs) ELSE expires_at END,
    created_at = CASE WHEN @renew THEN now() ELSE created_at END
WHERE scope = @scope AND operation = @operation AND idempotency_key = @key
