-- A pending send of a paused destination gives up its job and waits,
-- held, for the resume (state_set_paused.sql locks the same state row, so
-- a resume either sees the send held or the send sees the resume).
UPDATE destination_send SET state = 'held', job_id = NULL
WHERE id = @id AND state = 'pending'
