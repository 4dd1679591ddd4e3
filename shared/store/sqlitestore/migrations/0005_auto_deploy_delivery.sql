-- How many delivery attempts a build's auto deploy has made; 0 for builds from before.
ALTER TABLE builds ADD COLUMN auto_deploy_attempts INTEGER NOT NULL DEFAULT 0;

-- The deliverer's queue across organizations: complete builds whose delivery is pending or under
-- way, oldest (smallest id) first. Partial: queries must repeat this WHERE clause literally to
-- use it.
CREATE INDEX builds_awaiting_delivery ON builds (id, org_id)
    WHERE status = 'complete' AND auto_deploy_status IN ('pending', 'delivering');
