-- Plans and usage: an enterprise organization's own concurrency limit, each build's build
-- minutes (set when it ends), and per organization and calendar month (UTC) the minutes of the
-- builds that ended in it by platform and the triggers skipped for the plan by trigger, each
-- skip counted once per key.
ALTER TABLE organizations ADD COLUMN max_concurrent_builds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE builds ADD COLUMN build_minutes INTEGER NOT NULL DEFAULT 0;
CREATE TABLE usage_minutes (
    org_id   TEXT NOT NULL,
    month    TEXT NOT NULL, -- YYYY-MM
    platform TEXT NOT NULL,
    minutes  INTEGER NOT NULL,
    PRIMARY KEY (org_id, month, platform)
) STRICT;
CREATE TABLE usage_skipped (
    org_id       TEXT NOT NULL,
    month        TEXT NOT NULL,
    trigger_kind TEXT NOT NULL,
    skipped      INTEGER NOT NULL,
    PRIMARY KEY (org_id, month, trigger_kind)
) STRICT;
CREATE TABLE usage_skip_keys (
    org_id TEXT NOT NULL,
    key    TEXT NOT NULL,
    PRIMARY KEY (org_id, key)
) STRICT;
-- Before plans were enforced every organization was labelled free and limited by nothing;
-- organizations that kiln serve and kiln admin bootstrap make are enterprise now, and so are
-- those made before, so that an upgrade limits nobody (kiln admin plan changes a plan).
UPDATE organizations SET plan = 'enterprise' WHERE plan = 'free';
