-- The primary key decides which request with this key runs.
INSERT INTO api_idempotency (scope, operation, idempotency_key, request_hash, state, lock_token, locked_until, expires_at)
VALUES (@scope, @operation, @key, @request_hash, 'in_progress', @lock_token,
        now() + make_interval(secs => @lock_secs), now() + make_interval(secs => @ttl_secs))
ON CONFLICT (scope, operation, idempotency_key) DO NOTHING
RETURNING 1
