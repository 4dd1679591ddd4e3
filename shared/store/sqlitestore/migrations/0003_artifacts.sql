-- One artifact per build, keyed by the build id. Like builds, artifacts outlive their project:
-- no foreign keys. Lists read one project's artifacts by descending build id.

CREATE TABLE artifacts (
    org_id           TEXT NOT NULL,
    build_id         TEXT NOT NULL,
    project_id       TEXT NOT NULL,
    build_setting_id TEXT NOT NULL,
    platform         TEXT NOT NULL,
    build_type       TEXT NOT NULL,
    ue_version       TEXT NOT NULL,
    branch           TEXT NOT NULL,
    commit_sha       TEXT NOT NULL,
    object_key       TEXT NOT NULL, -- Artifact.Key: where the tarball is in the artifact store
    size_bytes       INTEGER NOT NULL,
    checksum_md5     TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    PRIMARY KEY (org_id, build_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX artifacts_by_project ON artifacts (org_id, project_id, build_id);
