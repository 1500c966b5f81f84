-- This process (@id) works no more jobs: its River client has stopped.
-- Its configuration's row stays (worker_config): other processes may
-- run it, and one that stopped still counts as running for its live
-- window, so that an older one does not resume at once.
DELETE FROM worker_process WHERE id = @id
