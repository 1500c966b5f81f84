INSERT INTO destination_state (destination, paused) VALUES (@destination, @paused)
ON CONFLICT (destination) DO UPDATE SET paused = EXCLUDED.paused
