-- Ordering, made exact where providers' clocks are coarse or absent:
--   - applied_received_at breaks ties: two events with the same ordering
--     time (providers' timestamps have whole seconds) are ordered by when
--     we received them, whatever order they are processed in;
--   - receipt_applied_at is the newest receipt time applied from events
--     that carry no ordering time of their own. Receipt time is compared
--     only with receipt time: against a provider's clock it could make a
--     real newer event look stale. applied_at is then null until an event
--     with a provider time arrives.
ALTER TABLE resource_version ALTER COLUMN applied_at DROP NOT NULL;
ALTER TABLE resource_version ADD COLUMN applied_received_at timestamptz NULL;
ALTER TABLE resource_version ADD COLUMN receipt_applied_at timestamptz NULL;
