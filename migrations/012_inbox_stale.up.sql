-- Whether the handlers found the delivery stale when they processed it: a
-- newer event of its resource had been applied (docs/handlers.md, "Order
-- awareness"). Null: not processed yet, or it names no resource.
ALTER TABLE inbox ADD COLUMN stale boolean NULL;
