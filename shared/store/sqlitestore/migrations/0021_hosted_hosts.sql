-- kiln's own build hosts (EC2 instances of the hosted pool, AWS deployment): when each was first
-- seen in service and the one build it claimed (claimed_at set: it may claim no more).

CREATE TABLE hosted_hosts (
    id         TEXT PRIMARY KEY,
    seen_at    INTEGER NOT NULL,
    claimed_at INTEGER,
    org_id     TEXT NOT NULL DEFAULT '',
    build_id   TEXT NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID;
