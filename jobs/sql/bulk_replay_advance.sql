UPDATE bulk_replay
SET position = position + @consumed, enqueued = enqueued + @added,
    state = CASE WHEN @finished THEN 'finished' ELSE state END,
    finished_at = CASE WHEN @finished THEN now() ELSE finished_at END
WHERE id = @id
