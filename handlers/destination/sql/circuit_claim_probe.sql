-- One request, the probe, may go to an open circuit every probe_every.
UPDATE destination_state SET next_probe_at = clock_timestamp() + @probe_every::interval
WHERE destination = @destination AND circuit_open_since IS NOT NULL AND next_probe_at <= clock_timestamp()
RETURNING true
