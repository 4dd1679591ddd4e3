// Package webhooks tells organizations' webhooks about their builds: each event becomes a
// delivery record (the delivery log), sent as a signed JSON POST and retried like auto deploy.
// The pending deliveries in the store are the queue, each due at its next-attempt time, so none is
// lost to a restart and no retry is slept on; organizations take turns (delivery.Scheduler).
package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/kilnbuild/kiln/shared/delivery"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// Sign is the X-Kiln-Signature of a body: "sha256=" and the hex HMAC-SHA256 with the secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// SecretAD is the associated data a webhook's secret is sealed with.
func SecretAD(webhookID string) []byte { return []byte("webhook:" + webhookID) }

// Render makes the JSON body of an event about a build.
type Render func(ctx context.Context, event kiln.WebhookEvent, b *kiln.Build, at time.Time) ([]byte, error)

// Caps per organization (docs/api.md).
const (
	// MaxWebhooks is how many webhooks an organization may have; creating one more is 409
	// invalid_state.
	MaxWebhooks = 20
	// MaxQueuedDeliveries caps redeliveries: a redelivery is refused with 429 rate_limited while
	// this many of the organization's deliveries are pending, and nothing is queued.
	MaxQueuedDeliveries = 50
	// RedeliverRetryAfter is the Retry-After, in seconds, of a redelivery refused by the cap.
	RedeliverRetryAfter = 60
)

// Store is what the dispatcher keeps in the store.
type Store interface {
	GetWebhook(ctx context.Context, orgID, id string) (*kiln.Webhook, error)
	ListWebhooks(ctx context.Context, orgID string) ([]*kiln.Webhook, error)
	CreateWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery) error
	GetWebhookDelivery(ctx context.Context, orgID, webhookID, id string) (*kiln.WebhookDelivery, error)
	DueWebhookDeliveries(ctx context.Context, now time.Time, perOrg, limit int) ([]*kiln.WebhookDelivery, error)
	RecordWebhookDelivery(ctx context.Context, d *kiln.WebhookDelivery, expectedNextAt time.Time) error
	QueuedWebhookDeliveries(ctx context.Context, orgID string, upTo int) (int, error)
}

var _ Store = store.Store(nil)

// Sender records and sends webhook deliveries.
type Sender struct {
	Store    Store
	Client   *http.Client // an outbound-safe client
	Sealer   *keyring.Sealer
	Render   Render
	Attempts int
	Backoff  time.Duration
	// Workers is how many attempts run at once (deploy.DefaultWorkers when < 1); at most
	// deploy.PerOrganization of them are one organization's.
	Workers int
	Logger  *slog.Logger
	Now     func() time.Time

	scheduler delivery.Scheduler
}

func (d *Sender) now() time.Time { return kiln.Now(d.Now) }

// eventOf names the event of a build's current status.
func eventOf(b *kiln.Build) kiln.WebhookEvent {
	switch b.Status {
	case kiln.StatusPending:
		return kiln.EventBuildCreated
	case kiln.StatusRunning:
		return kiln.EventBuildRunning
	case kiln.StatusComplete:
		return kiln.EventBuildComplete
	case kiln.StatusFailed:
		return kiln.EventBuildFailed
	default:
		return kiln.EventBuildSuperseded
	}
}

// BuildChanged records a delivery of the build's event for every active webhook of its
// organization that asked for it, and wakes the sender.
func (d *Sender) BuildChanged(ctx context.Context, b *kiln.Build) {
	if d == nil {
		return
	}
	event := eventOf(b)
	d.enqueue(ctx, b.OrganizationID, event, func(ctx context.Context, now time.Time) ([]byte, error) {
		return d.Render(ctx, event, b, now)
	})
}

// enqueue records a delivery of event, with the body render makes once, for every active webhook
// of the organization that asked for it, and wakes the sender.
func (d *Sender) enqueue(ctx context.Context, orgID string, event kiln.WebhookEvent, render func(ctx context.Context, now time.Time) ([]byte, error)) {
	ctx = context.WithoutCancel(ctx)
	hooks, err := d.Store.ListWebhooks(ctx, orgID)
	if err != nil || len(hooks) == 0 {
		return
	}
	now := d.now()
	var payload []byte
	for _, h := range hooks {
		if !h.Active || !slices.Contains(h.Events, event) {
			continue
		}
		if payload == nil {
			if payload, err = render(ctx, now); err != nil {
				d.Logger.ErrorContext(ctx, "render a webhook event", slog.String("error", err.Error()))
				return
			}
		}
		del := &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: orgID, WebhookID: h.ID, Event: event,
			Payload: payload, Status: kiln.DeliveryPending, CreatedAt: now, UpdatedAt: now}
		if err := d.Store.CreateWebhookDelivery(ctx, del); err != nil {
			d.Logger.ErrorContext(ctx, "record a webhook delivery", slog.String("webhook_id", h.ID), slog.String("error", err.Error()))
		}
	}
	d.Notify()
}

// Redeliver records a new delivery with the payload of an earlier one, due now, and wakes the
// sender. While MaxQueuedDeliveries of the organization's deliveries are pending it is
// rate_limited and records nothing.
func (d *Sender) Redeliver(ctx context.Context, orgID, webhookID, deliveryID string) (*kiln.WebhookDelivery, error) {
	old, err := d.Store.GetWebhookDelivery(ctx, orgID, webhookID, deliveryID)
	if err != nil {
		return nil, err
	}
	queued, err := d.Store.QueuedWebhookDeliveries(ctx, orgID, MaxQueuedDeliveries)
	if err != nil {
		return nil, fmt.Errorf("redeliver: %w", err)
	}
	if queued >= MaxQueuedDeliveries {
		return nil, kiln.Errorf(kiln.ERateLimited, "%d of the organization's webhook deliveries are pending (the most allowed); retry after %d s",
			MaxQueuedDeliveries, RedeliverRetryAfter)
	}
	now := d.now()
	del := &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: orgID, WebhookID: webhookID, Event: old.Event,
		Payload: old.Payload, Status: kiln.DeliveryPending, CreatedAt: now, UpdatedAt: now}
	if err := d.Store.CreateWebhookDelivery(ctx, del); err != nil {
		return nil, err
	}
	d.Notify()
	return del, nil
}
