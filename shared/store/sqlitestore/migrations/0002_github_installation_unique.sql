-- An installation of the GitHub App belongs to at most one organization. SQLite cannot change a
-- column's constraints in place, so organizations is rebuilt with github_installation_id NULL when
-- no installation is linked ('' before) and a unique index on it (NULLs never collide).
-- Before this migration UpdateOrganization could give two organizations the same installation; it
-- stays with the one of smallest (oldest) id and is unlinked from the others.

CREATE TABLE organizations_new (
    id                     TEXT PRIMARY KEY,
    name                   TEXT NOT NULL,
    slug                   TEXT NOT NULL UNIQUE,
    plan                   TEXT NOT NULL,
    defaults               TEXT NOT NULL, -- JSON of ProjectDefaults
    github_installation_id TEXT,          -- NULL when none is linked
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL
) STRICT;

INSERT INTO organizations_new (id, name, slug, plan, defaults, github_installation_id, created_at, updated_at)
SELECT o.id, o.name, o.slug, o.plan, o.defaults,
       CASE
           WHEN o.github_installation_id = '' THEN NULL
           WHEN EXISTS (SELECT 1 FROM organizations e
                        WHERE e.github_installation_id = o.github_installation_id AND e.id < o.id) THEN NULL
           ELSE o.github_installation_id
       END,
       o.created_at, o.updated_at
FROM organizations o;

DROP TABLE organizations;
ALTER TABLE organizations_new RENAME TO organizations;

CREATE UNIQUE INDEX organizations_by_installation ON organizations (github_installation_id);
