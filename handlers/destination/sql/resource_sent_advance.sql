-- The newest event the destination got for a resource, moved forward
-- (never back) on the clock the event was ordered by.
UPDATE destination_resource
SET sent_at = CASE WHEN NOT @at_is_receipt
                        AND (sent_at IS NULL OR (sent_at, coalesce(sent_received_at, '-infinity')) <= (@event_at, @event_received_at))
                   THEN @event_at ELSE sent_at END,
    sent_received_at = CASE WHEN NOT @at_is_receipt
                        AND (sent_at IS NULL OR (sent_at, coalesce(sent_received_at, '-infinity')) <= (@event_at, @event_received_at))
                   THEN @event_received_at ELSE sent_received_at END,
    receipt_sent_at = CASE WHEN @at_is_receipt AND (receipt_sent_at IS NULL OR receipt_sent_at <= @event_received_at)
                   THEN @event_received_at ELSE receipt_sent_at END,
    updated_at = now()
WHERE destination = @destination AND source = @source AND resource_key = @resource_key
