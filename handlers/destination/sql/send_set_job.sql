UPDATE destination_send SET state = 'pending', job_id = @job_id WHERE id = @id
