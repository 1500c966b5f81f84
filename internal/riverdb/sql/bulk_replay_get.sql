-- done: replays whose job reached a final state, or was already pruned by
-- River's job cleaner (which only deletes finished jobs).
SELECT b.id, b.filter, b.state, cardinality(b.inbox_ids), b.enqueued,
       (SELECT count(*) FROM replay r LEFT JOIN river_job j ON j.id = r.job_id
        WHERE r.bulk_replay_id = b.id
          AND (j.id IS NULL OR j.state IN ('completed', 'cancelled', 'discarded')))::int AS done,
       b.created_at, b.finished_at
FROM bulk_replay b
WHERE b.id = @id
