INSERT INTO replay (inbox_id, bulk_replay_id, job_id)
SELECT inbox_id, @bulk_replay_id, job_id
FROM unnest(@inbox_ids::bigint[], @job_ids::bigint[]) AS r (inbox_id, job_id)
RETURNING id, inbox_id, job_id
