-- One delivery stored as the ingest of a version before migration 026
-- stored it: the inbox's own unique constraint decides duplicates. After
-- the migration this fails (the partitioned inbox's id has no default),
-- as that version's ingest does; the scenario times the attempt either way.
INSERT INTO inbox (source, delivery_id, event_type, payload, payload_sha256)
VALUES ('github', $1, 'push', $2, sha256($2))
ON CONFLICT DO NOTHING
