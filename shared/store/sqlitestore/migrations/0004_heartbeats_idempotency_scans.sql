-- When the host running a build last reported; NULL until it has.
ALTER TABLE builds ADD COLUMN heartbeat_at INTEGER;

-- The build created under an idempotency key of an organization. A row is written in the same
-- transaction as its build and never changes.
CREATE TABLE idempotency_keys (
    org_id      TEXT NOT NULL,
    key         TEXT NOT NULL,
    build_id    TEXT NOT NULL,
    fingerprint TEXT NOT NULL, -- digest of the request that created the build
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (org_id, key)
) STRICT, WITHOUT ROWID;

-- The scans across organizations. Queued builds by status, oldest (smallest id) first.
CREATE INDEX builds_queue ON builds (status, id);
-- Scheduled build settings only; queries must say trigger = 'scheduled' literally to use it.
CREATE INDEX build_settings_scheduled ON build_settings (org_id, id) WHERE trigger = 'scheduled';
-- Artifacts by age, oldest first.
CREATE INDEX artifacts_by_age ON artifacts (created_at);
