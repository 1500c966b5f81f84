-- A destination's shared state row.
INSERT INTO destination_state (destination) VALUES (@destination) ON CONFLICT DO NOTHING
