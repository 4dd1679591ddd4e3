package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// The delivery queues (migration 0014): auto deploys (complete builds whose autoDeployStatus is
// pending or delivering) and pending webhook deliveries, each due at its next-attempt time. The
// fair reads number each organization's due entries in due order (a window function over the
// partial index) and keep the first perOrg of each.

// queuedBuilds is the WHERE clause of the partial index builds_delivery_due, repeated literally.
const queuedBuilds = `status = 'complete' AND auto_deploy_status IN ('pending', 'delivering')`

// DueBuildDeliveries reads the due auto deploys, at most perOrg of each organization, earliest
// due first.
func (s *Store) DueBuildDeliveries(ctx context.Context, now time.Time, perOrg, n int) ([]*kiln.Build, error) {
	return scanAll(ctx, s, "due build deliveries", scanBuild, `SELECT `+buildCols+` FROM (
		SELECT `+buildCols+`, ROW_NUMBER() OVER (PARTITION BY org_id ORDER BY auto_deploy_next_at, id) AS turn
		FROM builds INDEXED BY builds_delivery_due WHERE `+queuedBuilds+` AND auto_deploy_next_at <= ?)
		WHERE turn <= ? ORDER BY auto_deploy_next_at, id, org_id LIMIT ?`, now.UnixMilli(), scanLimit(perOrg), scanLimit(n))
}

// RecordBuildDelivery writes the delivery fields if the build is still queued for delivery and
// its next-attempt time is still expectedNextAt.
func (s *Store) RecordBuildDelivery(ctx context.Context, b *kiln.Build, expectedNextAt time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE builds
			SET auto_deploy_status = ?, auto_deploy_error = ?, auto_deploy_attempts = ?, auto_deploy_next_at = ?
			WHERE org_id = ? AND id = ? AND `+queuedBuilds+` AND auto_deploy_next_at = ?`,
			b.AutoDeployStatus, b.AutoDeployError, b.AutoDeployAttempts, dueMS(b.AutoDeployNextAt),
			b.OrganizationID, b.ID, dueMS(expectedNextAt))
		if err != nil {
			return fmt.Errorf("sqlitestore: record build delivery: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM builds WHERE org_id = ? AND id = ?`, b.OrganizationID, b.ID).Scan(&one)
		if err != nil {
			return readErr("record build delivery", err, "build")
		}
		return kiln.Errorf(kiln.EInvalidState, "build %s: its delivery was taken or recorded by another worker", b.ID)
	})
}

// QueuedBuildDeliveries counts the organization's queued auto deploys, up to upTo.
func (s *Store) QueuedBuildDeliveries(ctx context.Context, orgID string, upTo int) (int, error) {
	var n int
	err := s.queryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM builds INDEXED BY builds_delivery_due
		WHERE `+queuedBuilds+` AND org_id = ? LIMIT ?)`, orgID, max(upTo, 0)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: queued build deliveries: %w", err)
	}
	return n, nil
}

// DueWebhookDeliveries reads the due webhook deliveries, at most perOrg of each organization,
// earliest due first.
func (s *Store) DueWebhookDeliveries(ctx context.Context, now time.Time, perOrg, n int) ([]*kiln.WebhookDelivery, error) {
	return scanAll(ctx, s, "due webhook deliveries", scanDelivery, `SELECT `+deliveryCols+` FROM (
		SELECT `+deliveryCols+`, ROW_NUMBER() OVER (PARTITION BY org_id ORDER BY next_attempt_at, id) AS turn
		FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE status = 'pending' AND next_attempt_at <= ?)
		WHERE turn <= ? ORDER BY next_attempt_at, id, org_id, webhook_id LIMIT ?`, now.UnixMilli(), scanLimit(perOrg), scanLimit(n))
}

// RecordWebhookDelivery updates the delivery if it is pending and its next-attempt time is still
// expectedNextAt.
func (s *Store) RecordWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery, expectedNextAt time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries
			SET status = ?, attempts = ?, response_status = ?, error = ?, updated_at = ?, next_attempt_at = ?
			WHERE org_id = ? AND webhook_id = ? AND id = ? AND status = 'pending' AND next_attempt_at = ?`,
			d.Status, d.Attempts, d.ResponseStatus, d.Error, ms(d.UpdatedAt), dueMS(d.NextAttemptAt),
			d.OrganizationID, d.WebhookID, d.ID, dueMS(expectedNextAt))
		if err != nil {
			return fmt.Errorf("sqlitestore: record webhook delivery: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM webhook_deliveries WHERE org_id = ? AND webhook_id = ? AND id = ?`,
			d.OrganizationID, d.WebhookID, d.ID).Scan(&one)
		if err != nil {
			return readErr("record webhook delivery", err, "webhook delivery")
		}
		return kiln.Errorf(kiln.EInvalidState, "webhook delivery %s was taken or recorded by another worker", d.ID)
	})
}

// QueuedWebhookDeliveries counts the organization's pending webhook deliveries, up to upTo.
func (s *Store) QueuedWebhookDeliveries(ctx context.Context, orgID string, upTo int) (int, error) {
	var n int
	err := s.queryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM webhook_deliveries INDEXED BY webhook_deliveries_due
		WHERE status = 'pending' AND org_id = ? LIMIT ?)`, orgID, max(upTo, 0)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: queued webhook deliveries: %w", err)
	}
	return n, nil
}
