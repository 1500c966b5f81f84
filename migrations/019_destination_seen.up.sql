-- When a running sender last said its process has the destination
-- configured. A destination with unfinished sends that no process has
-- said so of lately is shown as unknown; its sends wait, and only an
-- operator fails them (a replica with an older config must not).
ALTER TABLE destination_state ADD COLUMN seen_at timestamptz NULL;
