-- A follower's next rows (`hookinbox listen`): the deliveries after its
-- cursor up to a settled horizon (Settle), in id order, of the sources
-- it follows (all when none is named). Only what its filters and its
-- page's byte budget need: stream_load.sql reads the payloads of the rows
-- it keeps. octet_length reads a stored payload's length from its header,
-- without decompressing it.
SELECT id, source, event_type, octet_length(payload) AS size
FROM inbox
WHERE id > @after::bigint
  AND id <= @through::bigint
  AND (cardinality(@sources::text[]) = 0 OR source = ANY(@sources::text[]))
ORDER BY id
LIMIT @limit
