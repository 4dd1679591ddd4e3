-- Organizations' Perforce trigger tokens. Only the SHA-256 of the secret is kept; it is unique
-- across organizations, because a trigger is told its organization by the token alone.

CREATE TABLE trigger_tokens (
    org_id       TEXT NOT NULL,
    id           TEXT NOT NULL,
    name         TEXT NOT NULL,
    hash         TEXT NOT NULL,
    hint         TEXT NOT NULL,
    created_by   TEXT NOT NULL, -- user id of the admin who created it
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    PRIMARY KEY (org_id, id)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX trigger_tokens_by_hash ON trigger_tokens (hash);
