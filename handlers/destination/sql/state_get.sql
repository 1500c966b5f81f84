SELECT paused, circuit_open_since IS NOT NULL, next_probe_at FROM destination_state WHERE destination = @destination
