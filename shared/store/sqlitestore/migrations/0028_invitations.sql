-- Invitations to join an organization: at most one per email (email_key, as members'), removed
-- when accepted or revoked. hash is the SHA-256 of the link's secret.
CREATE TABLE invitations (
    org_id          TEXT NOT NULL,
    id              TEXT NOT NULL,
    email           TEXT NOT NULL,
    email_key       TEXT NOT NULL, -- kiln.NormalizeEmail(email)
    role            TEXT NOT NULL,
    hash            TEXT NOT NULL UNIQUE,
    invited_by_id   TEXT NOT NULL,
    invited_by_name TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    PRIMARY KEY (org_id, id),
    UNIQUE (org_id, email_key)
) STRICT, WITHOUT ROWID;
