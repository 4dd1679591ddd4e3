// Package webhooks tells organizations' webhooks about their builds: each event becomes a
// delivery record (the delivery log), sent as a signed JSON POST and retried like auto deploy.
// The pending deliveries in the store are the queue, so none is lost to a restart.
package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/kilnbuild/kiln/shared/deploy"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/wake"
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

// Dispatcher records and sends webhook deliveries.
type Dispatcher struct {
	Store    store.Store
	Client   *http.Client // an outbound-safe client
	Sealer   *keyring.Sealer
	Render   Render
	Attempts int
	Backoff  time.Duration
	Logger   *slog.Logger
	wake     wake.Signal
}

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
func (d *Dispatcher) BuildChanged(ctx context.Context, b *kiln.Build) {
	if d == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	hooks, err := d.Store.ListWebhooks(ctx, b.OrganizationID)
	if err != nil || len(hooks) == 0 {
		return
	}
	event, now := eventOf(b), time.Now().UTC().Truncate(time.Millisecond)
	var payload []byte
	for _, h := range hooks {
		if !h.Active || !slices.Contains(h.Events, event) {
			continue
		}
		if payload == nil {
			if payload, err = d.Render(ctx, event, b, now); err != nil {
				d.Logger.ErrorContext(ctx, "render a webhook event", slog.String("error", err.Error()))
				return
			}
		}
		del := &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: b.OrganizationID, WebhookID: h.ID, Event: event,
			Payload: payload, Status: kiln.DeliveryPending, CreatedAt: now, UpdatedAt: now}
		if err := d.Store.CreateWebhookDelivery(ctx, del); err != nil {
			d.Logger.ErrorContext(ctx, "record a webhook delivery", slog.String("webhook_id", h.ID), slog.String("error", err.Error()))
		}
	}
	d.Notify()
}

// Redeliver records a new delivery with the payload of an earlier one, and wakes the sender.
func (d *Dispatcher) Redeliver(ctx context.Context, orgID, webhookID, deliveryID string) (*kiln.WebhookDelivery, error) {
	old, err := d.Store.GetWebhookDelivery(ctx, orgID, webhookID, deliveryID)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	del := &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: orgID, WebhookID: webhookID, Event: old.Event,
		Payload: old.Payload, Status: kiln.DeliveryPending, CreatedAt: now, UpdatedAt: now}
	if err := d.Store.CreateWebhookDelivery(ctx, del); err != nil {
		return nil, err
	}
	d.Notify()
	return del, nil
}

// Notify wakes the sender.
func (d *Dispatcher) Notify() { d.wake.Notify() }

// Run sends pending deliveries until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	for ctx.Err() == nil {
		pending, err := d.Store.PendingWebhookDeliveries(ctx, 20)
		if err != nil && ctx.Err() == nil {
			d.Logger.ErrorContext(ctx, "list webhook deliveries", slog.String("error", err.Error()))
		}
		sent := 0
		for _, p := range pending {
			if ctx.Err() != nil {
				return
			}
			if d.send(ctx, p) {
				sent++
			}
		}
		if sent > 0 {
			continue
		}
		select {
		case <-ctx.Done():
		case <-d.wake.C():
		case <-time.After(5 * time.Second):
		}
	}
}

// send makes one delivery to its end; false when it was not pending any more.
func (d *Dispatcher) send(ctx context.Context, listed *kiln.WebhookDelivery) bool {
	del, err := d.Store.GetWebhookDelivery(ctx, listed.OrganizationID, listed.WebhookID, listed.ID)
	if err != nil || del.Status != kiln.DeliveryPending {
		return false
	}
	finish := func(ok bool, attempts, status int, msg string) {
		del.Attempts, del.ResponseStatus, del.Error = attempts, status, msg
		del.Status = kiln.DeliveryFailed
		if ok {
			del.Status = kiln.DeliverySucceeded
		}
		del.UpdatedAt = time.Now().UTC().Truncate(time.Millisecond)
		if err := d.Store.UpdateWebhookDelivery(context.WithoutCancel(ctx), del); err != nil {
			d.Logger.ErrorContext(ctx, "record a webhook delivery", slog.String("delivery_id", del.ID), slog.String("error", err.Error()))
		}
	}
	h, err := d.Store.GetWebhook(ctx, del.OrganizationID, del.WebhookID)
	if err != nil {
		finish(false, 0, 0, "the webhook was deleted")
		return true
	}
	secret, err := d.Sealer.Open(h.Secret, SecretAD(h.ID))
	if err != nil {
		finish(false, 0, 0, "the webhook's secret cannot be read")
		return true
	}
	header := http.Header{}
	header.Set("X-Kiln-Event", string(del.Event))
	header.Set("X-Kiln-Delivery", del.ID)
	header.Set("X-Kiln-Signature", Sign(secret, del.Payload))
	res := deploy.PostJSON(ctx, d.Client, h.URL, header, del.Payload, deploy.Policy{Attempts: d.Attempts, Backoff: d.Backoff})
	if ctx.Err() != nil {
		return false // stopping: it stays pending and is sent after the restart
	}
	finish(res.Succeeded, res.Attempts, res.Status, res.Error)
	return true
}
