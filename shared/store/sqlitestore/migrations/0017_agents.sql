-- Organizations' build agents (`kiln agent`). Only the SHA-256 of an agent's token is kept; it is
-- unique across organizations, because an agent is told its organization by its token alone. A
-- revoked agent keeps its row (revoked_at set).

CREATE TABLE agents (
    org_id       TEXT NOT NULL,
    id           TEXT NOT NULL,
    name         TEXT NOT NULL,
    pool         TEXT NOT NULL,
    hash         TEXT NOT NULL,
    hint         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    last_seen_at INTEGER,
    PRIMARY KEY (org_id, id)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX agents_by_hash ON agents (hash);
