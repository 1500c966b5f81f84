-- The next batch of a running bulk replay, minus rows deleted since it was
-- created (retention).
SELECT b.state, b.position, cardinality(b.inbox_ids),
       coalesce((SELECT array_agg(i.id ORDER BY i.id) FROM inbox i
                 WHERE i.id = ANY (b.inbox_ids[b.position + 1 : b.position + @batch])), '{}'),
       least(@batch, cardinality(b.inbox_ids) - b.position)
FROM bulk_replay b
WHERE b.id = @id
FOR UPDATE OF b
