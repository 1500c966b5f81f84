DELETE FROM bulk_replay WHERE state = 'finished' AND finished_at < @cutoff
