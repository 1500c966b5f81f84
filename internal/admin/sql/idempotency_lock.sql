SELECT request_hash, state, status_code, response_body,
       coalesce(locked_until < now(), false) AS lock_expired,
       expires_at < now() AS expired,
       greatest(ceil(extract(epoch FROM locked_until - now())), 1)::int AS retry_after
FROM api_idempotency
WHERE scope = @scope AND operation = @operation AND idempotency_key = @key
FOR UPDATE
