-- Deliveries are scheduled in the store: each queued auto deploy and webhook delivery carries when
-- its next attempt is due (unix milliseconds; 0: now), so a retry is a stored time, not a sleep.
ALTER TABLE builds ADD COLUMN auto_deploy_next_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_deliveries ADD COLUMN next_attempt_at INTEGER NOT NULL DEFAULT 0;

-- The queues, read by due time and fairly across organizations (a window per organization), and
-- counted per organization for the redelivery caps. Partial: queries must repeat these WHERE
-- clauses literally to use them.
DROP INDEX builds_awaiting_delivery;
CREATE INDEX builds_delivery_due ON builds (org_id, auto_deploy_next_at, id)
    WHERE status = 'complete' AND auto_deploy_status IN ('pending', 'delivering');
DROP INDEX webhook_deliveries_pending;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (org_id, next_attempt_at, id)
    WHERE status = 'pending';
