-- A destination's shared state row, and a slot row for each of its
-- @slots requests in flight (a config that raises max_in_flight adds the
-- missing ones; one that lowers it leaves the rest unused).
WITH state AS (
    INSERT INTO destination_state (destination) VALUES (@destination) ON CONFLICT DO NOTHING
)
INSERT INTO destination_slot (destination, slot)
SELECT @destination, n FROM generate_series(0, @slots::int - 1) AS n
ON CONFLICT DO NOTHING
