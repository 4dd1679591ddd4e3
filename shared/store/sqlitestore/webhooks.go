package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// Webhooks and their deliveries (migration 0006; format: 0025; signature_header: 0030).

const webhookCols = `org_id, id, url, events, active, secret, created_at, updated_at, format, signature_header`

func encodeEvents(events []kiln.WebhookEvent) (string, error) {
	if events == nil {
		events = []kiln.WebhookEvent{}
	}
	b, err := json.Marshal(events)
	return string(b), err
}

func scanWebhook(r scanner) (*kiln.Webhook, error) {
	var w kiln.Webhook
	var events string
	var created, updated int64
	if err := r.Scan(&w.OrganizationID, &w.ID, &w.URL, &events, &w.Active, &w.Secret, &created, &updated, &w.Format, &w.SignatureHeader); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, fmt.Errorf("decode webhook events: %w", err)
	}
	w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
	return &w, nil
}

func (s *Store) CreateWebhook(ctx context.Context, w *kiln.Webhook) error {
	events, err := encodeEvents(w.Events)
	if err != nil {
		return fmt.Errorf("sqlitestore: create webhook: %w", err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO webhooks (`+webhookCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.OrganizationID, w.ID, w.URL, events, w.Active, w.Secret, ms(w.CreatedAt), ms(w.UpdatedAt), w.Format, w.SignatureHeader)
	if err != nil {
		return writeErr("create webhook", err, "the webhook already exists")
	}
	return nil
}

func (s *Store) GetWebhook(ctx context.Context, orgID, id string) (*kiln.Webhook, error) {
	return getOne(ctx, s, "get webhook", "webhook", scanWebhook,
		`SELECT `+webhookCols+` FROM webhooks WHERE org_id = ? AND id = ?`, orgID, id)
}

// ListWebhooks lists all of an organization's webhooks, oldest first.
func (s *Store) ListWebhooks(ctx context.Context, orgID string) ([]*kiln.Webhook, error) {
	return scanAll(ctx, s, "list webhooks", scanWebhook,
		`SELECT `+webhookCols+` FROM webhooks WHERE org_id = ? ORDER BY id`, orgID)
}

// UpdateWebhook replaces url, events, active, secret, signatureHeader and updatedAt; the format
// never changes.
func (s *Store) UpdateWebhook(ctx context.Context, w *kiln.Webhook) error {
	events, err := encodeEvents(w.Events)
	if err != nil {
		return fmt.Errorf("sqlitestore: update webhook: %w", err)
	}
	return s.change(ctx, "update webhook", "webhook",
		`UPDATE webhooks SET url = ?, events = ?, active = ?, secret = ?, signature_header = ?, updated_at = ?
		WHERE org_id = ? AND id = ?`,
		w.URL, events, w.Active, w.Secret, w.SignatureHeader, ms(w.UpdatedAt), w.OrganizationID, w.ID)
}

// DeleteWebhook deletes the webhook and its deliveries in one transaction.
func (s *Store) DeleteWebhook(ctx context.Context, orgID, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhooks WHERE org_id = ? AND id = ?`, orgID, id)
		if err != nil {
			return fmt.Errorf("sqlitestore: delete webhook: %w", err)
		}
		if err := mustChange("delete webhook", res, "webhook"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE org_id = ? AND webhook_id = ?`, orgID, id); err != nil {
			return fmt.Errorf("sqlitestore: delete webhook's deliveries: %w", err)
		}
		return nil
	})
}

const deliveryCols = `org_id, webhook_id, id, event, payload, status, attempts, response_status, error, created_at, updated_at,
	next_attempt_at`

func scanDelivery(r scanner) (*kiln.WebhookDelivery, error) {
	var d kiln.WebhookDelivery
	var created, updated, nextAt int64
	if err := r.Scan(&d.OrganizationID, &d.WebhookID, &d.ID, &d.Event, &d.Payload, &d.Status, &d.Attempts,
		&d.ResponseStatus, &d.Error, &created, &updated, &nextAt); err != nil {
		return nil, err
	}
	d.CreatedAt, d.UpdatedAt, d.NextAttemptAt = fromMS(created), fromMS(updated), fromDueMS(nextAt)
	return &d, nil
}

// CreateWebhookDelivery records a delivery of an existing webhook (not_found otherwise).
func (s *Store) CreateWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM webhooks WHERE org_id = ? AND id = ?`, d.OrganizationID, d.WebhookID).Scan(&one)
		if err != nil {
			return readErr("create webhook delivery", err, "webhook")
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+deliveryCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.OrganizationID, d.WebhookID, d.ID, d.Event, d.Payload, d.Status, d.Attempts, d.ResponseStatus,
			d.Error, ms(d.CreatedAt), ms(d.UpdatedAt), dueMS(d.NextAttemptAt))
		if err != nil {
			return writeErr("create webhook delivery", err, "the webhook delivery already exists")
		}
		return nil
	})
}

func (s *Store) GetWebhookDelivery(ctx context.Context, orgID, webhookID, id string) (*kiln.WebhookDelivery, error) {
	return getOne(ctx, s, "get webhook delivery", "webhook delivery", scanDelivery,
		`SELECT `+deliveryCols+` FROM webhook_deliveries
		WHERE org_id = ? AND webhook_id = ? AND id = ?`, orgID, webhookID, id)
}

// ListWebhookDeliveries lists a webhook's deliveries, newest first.
func (s *Store) ListWebhookDeliveries(ctx context.Context, orgID, webhookID string, p store.Page) ([]*kiln.WebhookDelivery, string, error) {
	q := inOrg(orgID)
	q.where("webhook_id = ?", webhookID)
	return list(ctx, s, "list webhook deliveries", deliveryCols, "webhook_deliveries", "id", q, p, scanDelivery,
		func(d *kiln.WebhookDelivery) string { return d.ID })
}

// UpdateWebhookDelivery replaces status, attempts, responseStatus, error, nextAttemptAt and
// updatedAt.
func (s *Store) UpdateWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery) error {
	return s.change(ctx, "update webhook delivery", "webhook delivery", `UPDATE webhook_deliveries
		SET status = ?, attempts = ?, response_status = ?, error = ?, updated_at = ?, next_attempt_at = ?
		WHERE org_id = ? AND webhook_id = ? AND id = ?`,
		d.Status, d.Attempts, d.ResponseStatus, d.Error, ms(d.UpdatedAt), dueMS(d.NextAttemptAt),
		d.OrganizationID, d.WebhookID, d.ID)
}
