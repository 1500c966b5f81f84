INSERT INTO destination_lease (destination, slot)
SELECT @destination, g FROM generate_series(0, @max_in_flight - 1) g
ON CONFLICT DO NOTHING
