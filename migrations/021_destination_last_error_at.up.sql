-- When the request that failed with last_error was made. last_error is
-- kept after the destination recovers, for the operator who asks what it
-- was and when; the admin API shows it as current only while
-- failing_since is set.
ALTER TABLE destination_state ADD COLUMN last_error_at timestamptz NULL;
