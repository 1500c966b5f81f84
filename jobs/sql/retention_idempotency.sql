WITH doomed AS (
    SELECT scope, operation, idempotency_key FROM api_idempotency
    WHERE created_at < @cutoff AND expires_at < now()
    LIMIT @batch
)
DELETE FROM api_idempotency a USING doomed d
WHERE (a.scope, a.operation, a.idempotency_key) = (d.scope, d.operation, d.idempotency_key)
