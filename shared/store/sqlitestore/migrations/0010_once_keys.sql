-- Keys that may be used once (the GitHub install flow's state), kept until they expire.

CREATE TABLE once_keys (
    org_id     TEXT NOT NULL,
    key        TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (org_id, key)
) STRICT, WITHOUT ROWID;
