-- People who sign in with GitHub, keyed by kiln user id and found by GitHub's user id; their
-- memberships are rows of members with the same user_id, in any organization.
CREATE TABLE github_users (
    user_id    TEXT PRIMARY KEY,
    github_id  INTEGER NOT NULL UNIQUE,
    email      TEXT NOT NULL,
    name       TEXT NOT NULL,
    login      TEXT NOT NULL,
    created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Console sessions. hash is the SHA-256 of the session's secret; org_id is "" before the session
-- acts for an organization.
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    org_id     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    user_agent TEXT NOT NULL,
    address    TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_by_user ON sessions (user_id, created_at);

CREATE INDEX members_by_user ON members (user_id, created_at);
