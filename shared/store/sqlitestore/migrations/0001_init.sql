-- Every row carries org_id; lists read one organization's rows by descending id (ids sort by
-- creation time). Times are unix milliseconds, optional ones NULL.

CREATE TABLE organizations (
    id                     TEXT PRIMARY KEY,
    name                   TEXT NOT NULL,
    slug                   TEXT NOT NULL UNIQUE,
    plan                   TEXT NOT NULL,
    defaults               TEXT NOT NULL, -- JSON of ProjectDefaults
    github_installation_id TEXT NOT NULL,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL
) STRICT;

CREATE TABLE members (
    org_id          TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    email           TEXT NOT NULL,
    email_key       TEXT NOT NULL, -- kiln.NormalizeEmail(email)
    name            TEXT NOT NULL,
    role            TEXT NOT NULL,
    user_created_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (org_id, user_id),
    UNIQUE (org_id, email_key)
) STRICT, WITHOUT ROWID;

CREATE TABLE tokens (
    org_id       TEXT NOT NULL,
    id           TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    hint         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER,
    PRIMARY KEY (org_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX tokens_by_user ON tokens (org_id, user_id, id);

CREATE TABLE projects (
    org_id            TEXT NOT NULL,
    id                TEXT NOT NULL,
    name              TEXT NOT NULL,
    description       TEXT NOT NULL,
    source_control    TEXT NOT NULL,
    repo_link         TEXT NOT NULL,
    installation_id   TEXT NOT NULL,
    default_branch    TEXT NOT NULL,
    depot             TEXT NOT NULL,
    stream_path       TEXT NOT NULL,
    uproject_path     TEXT NOT NULL,
    uproject          TEXT, -- JSON of UprojectInfo, NULL when none was read
    last_build_at     INTEGER,
    last_build_status TEXT NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    PRIMARY KEY (org_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX projects_by_source ON projects (org_id, source_control, id);

CREATE TABLE build_settings (
    org_id                   TEXT NOT NULL,
    project_id               TEXT NOT NULL,
    id                       TEXT NOT NULL,
    platform                 TEXT NOT NULL,
    build_type               TEXT NOT NULL,
    branch                   TEXT NOT NULL,
    stream_path              TEXT NOT NULL,
    ue_version               TEXT NOT NULL,
    uproject_path            TEXT NOT NULL,
    trigger                  TEXT NOT NULL,
    schedule                 TEXT NOT NULL,
    notify_on_complete       INTEGER NOT NULL,
    auto_deploy              INTEGER NOT NULL,
    upload_build_url         TEXT NOT NULL,
    upload_build_auth_header BLOB,
    created_at               INTEGER NOT NULL,
    updated_at               INTEGER NOT NULL,
    PRIMARY KEY (org_id, project_id, id),
    FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- Builds outlive their project and setting: no foreign keys.
CREATE TABLE builds (
    org_id             TEXT NOT NULL,
    id                 TEXT NOT NULL,
    project_id         TEXT NOT NULL,
    build_setting_id   TEXT NOT NULL,
    status             TEXT NOT NULL,
    platform           TEXT NOT NULL,
    build_type         TEXT NOT NULL,
    branch             TEXT NOT NULL,
    commit_sha         TEXT NOT NULL,
    commit_message     TEXT NOT NULL,
    changelist         TEXT NOT NULL,
    ue_version         TEXT NOT NULL,
    triggered_by       TEXT NOT NULL,
    failure_reason     TEXT NOT NULL,
    auto_deploy_status TEXT NOT NULL,
    auto_deploy_error  TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    started_at         INTEGER,
    finished_at        INTEGER,
    PRIMARY KEY (org_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX builds_by_project ON builds (org_id, project_id, id);
CREATE INDEX builds_by_setting ON builds (org_id, build_setting_id, id);
CREATE INDEX builds_by_status ON builds (org_id, status, id);
