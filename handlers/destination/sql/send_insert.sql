-- One send per (delivery, destination): a replay or a retry of the
-- processing inserts nothing and RETURNING yields no row.
INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
                              resource_key, event_at, event_received_at, at_is_receipt, state)
VALUES (@destination, @source, @delivery_id, @inbox_id, @event_type, @key, @ordered, @skip_stale,
        @resource_key, @event_at, @event_received_at, @at_is_receipt, @state)
ON CONFLICT ON CONSTRAINT destination_send_once DO NOTHING
RETURNING id
