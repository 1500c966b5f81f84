-- A processing batch's mirror rows at once (issueMirrorRows), at most one
-- per (repo, number). Latest state wins even without the registry's
-- staleness check: an older updated_at never overwrites a newer one.
INSERT INTO github_issue_mirror (repo, number, kind, state, title, updated_at, last_delivery_id)
SELECT * FROM unnest(@repos::text[], @numbers::int[], @kinds::text[], @states::text[], @titles::text[],
                     @updated_ats::timestamptz[], @delivery_ids::text[])
ON CONFLICT (repo, number) DO UPDATE
SET kind = EXCLUDED.kind, state = EXCLUDED.state, title = EXCLUDED.title,
    updated_at = EXCLUDED.updated_at, last_delivery_id = EXCLUDED.last_delivery_id
WHERE github_issue_mirror.updated_at <= EXCLUDED.updated_at
