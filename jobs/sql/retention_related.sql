-- What lives and dies with a source's deliveries: the derived-key steps,
-- resource versions and finished bulk replays. One batch of each.
WITH steps AS (
    DELETE FROM handler_step
    WHERE key IN (SELECT key FROM handler_step
                  WHERE created_at < @cutoff AND (source = ANY(@sources)) = @include
                  LIMIT @batch)
    RETURNING 1
), versions AS (
    DELETE FROM resource_version
    WHERE (source, resource_key) IN (SELECT source, resource_key FROM resource_version
                                     WHERE updated_at < @cutoff AND (source = ANY(@sources)) = @include
                                     LIMIT @batch)
    RETURNING 1
)
SELECT (SELECT count(*) FROM steps) + (SELECT count(*) FROM versions)
