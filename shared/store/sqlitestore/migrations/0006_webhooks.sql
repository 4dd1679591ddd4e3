-- Organization webhooks and their delivery log.

CREATE TABLE webhooks (
    org_id     TEXT NOT NULL,
    id         TEXT NOT NULL,
    url        TEXT NOT NULL,
    events     TEXT NOT NULL, -- JSON array of event names, in the order given
    active     INTEGER NOT NULL,
    secret     BLOB, -- sealed signing secret
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (org_id, id)
) STRICT, WITHOUT ROWID;

CREATE TABLE webhook_deliveries (
    org_id          TEXT NOT NULL,
    webhook_id      TEXT NOT NULL,
    id              TEXT NOT NULL,
    event           TEXT NOT NULL,
    payload         BLOB, -- the exact JSON body
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL,
    response_status INTEGER NOT NULL,
    error           TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (org_id, webhook_id, id)
) STRICT, WITHOUT ROWID;

-- The webhook sender's queue across organizations: pending deliveries, oldest (smallest id) first.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (status, id);
