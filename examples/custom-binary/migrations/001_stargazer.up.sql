-- One row per (repository, user) who starred it: the natural key makes a
-- retried or replayed delivery add nothing.
CREATE TABLE stargazer (
    repo        text        NOT NULL,
    login       text        NOT NULL,
    delivery_id text        NOT NULL,
    starred_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo, login)
);
