-- Latest state wins even without the registry's staleness check: an older
-- updated_at never overwrites a newer one.
INSERT INTO github_issue_mirror (repo, number, kind, state, title, updated_at, last_delivery_id)
VALUES (@repo, @number, @kind, @state, @title, @updated_at, @delivery_id)
ON CONFLICT (repo, number) DO UPDATE
SET kind = EXCLUDED.kind, state = EXCLUDED.state, title = EXCLUDED.title,
    updated_at = EXCLUDED.updated_at, last_delivery_id = EXCLUDED.last_delivery_id
WHERE github_issue_mirror.updated_at <= EXCLUDED.updated_at
