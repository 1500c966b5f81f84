-- One replay, with its delivery and its job's state (no job once River's
-- cleaner deleted it).
SELECT r.id, r.inbox_id, i.source, i.delivery_id, r.job_id, j.state::text, r.bulk_replay_id, r.requested_at
FROM replay r
JOIN inbox i ON i.id = r.inbox_id
LEFT JOIN river_job j ON j.id = r.job_id
WHERE r.id = @id
