-- How a delivery reached the inbox: 'webhook' (signed POST), or recovered
-- through a provider's API ('stripe_events_api'), whose authenticity comes
-- from the authenticated API call rather than a signature.
ALTER TABLE inbox ADD COLUMN origin text NOT NULL DEFAULT 'webhook';
