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
	"github.com/kilnbuild/kiln/shared/webhooks/chat"
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

// Stamp finishes the stored payload of an event for the attempt made at now.
type Stamp func(ctx context.Context, event kiln.WebhookEvent, payload []byte, now time.Time) ([]byte, error)

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
	// GetProject and ListBuilds describe builds to chat webhooks and tell build.fixed.
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
	ListBuilds(ctx context.Context, orgID string, f store.BuildFilter, p store.Page) ([]*kiln.Build, string, error)
}

var _ Store = store.Store(nil)

// Sender records and sends webhook deliveries.
type Sender struct {
	Store  Store
	Client *http.Client // an outbound-safe client
	Sealer *keyring.Sealer
	Render Render
	// Stamp, when set, finishes a kiln webhook's payload at each attempt, before it is signed
	// (build.complete's fresh artifactUrl); on an error the payload goes as stored.
	Stamp Stamp
	// PublicURL is the service's public URL: chat messages link to the console's build page under
	// it ("" for no link).
	PublicURL string
	Attempts  int
	Backoff   time.Duration
	// Workers is how many attempts run at once (deploy.DefaultWorkers when < 1); at most
	// deploy.PerOrganization of them are one organization's.
	Workers int
	Logger  *slog.Logger
	Now     func() time.Time
	// Wake, when set, is woken instead of this sender's own workers when a delivery is recorded:
	// another process delivers (in AWS, the deliver function, woken by a sweep message on its
	// queue).
	Wake interface{ Notify() }

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
// organization that asked for it, and of build.fixed when a completed build fixes its setting
// (see fixes), and wakes the sender.
func (d *Sender) BuildChanged(ctx context.Context, b *kiln.Build) {
	if d == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	hooks, err := d.Store.ListWebhooks(ctx, b.OrganizationID)
	if err != nil || len(hooks) == 0 {
		return
	}
	var project *kiln.Project
	var looked bool
	describe := func(ctx context.Context, event kiln.WebhookEvent) chat.Message {
		if !looked {
			project, looked = d.project(ctx, b), true
		}
		return chat.New(event, b, project, d.PublicURL)
	}
	events := []kiln.WebhookEvent{eventOf(b)}
	if b.Status == kiln.StatusComplete && wanted(hooks, kiln.EventBuildFixed) && d.fixes(ctx, b) {
		events = append(events, kiln.EventBuildFixed)
	}
	for _, event := range events {
		d.enqueue(ctx, hooks, b.OrganizationID, event, func(ctx context.Context, now time.Time) ([]byte, error) {
			return d.Render(ctx, event, b, now)
		}, describe)
	}
	d.Notify()
}

// project is the build's project, nil once deleted (or unreadable).
func (d *Sender) project(ctx context.Context, b *kiln.Build) *kiln.Project {
	p, err := d.Store.GetProject(ctx, b.OrganizationID, b.ProjectID)
	if err != nil {
		return nil
	}
	return p
}

// fixesScan is how many of a setting's latest builds fixes reads.
const fixesScan = 50

// fixes reports whether a complete build fixes its setting: of the setting's latest builds
// (fixesScan, newest first), the one that finished last before b (complete or failed) failed.
// Builds still queued or running, superseded ones, and b itself do not count; a build without a
// setting fixes nothing.
func (d *Sender) fixes(ctx context.Context, b *kiln.Build) bool {
	if b.BuildSettingID == "" || b.FinishedAt == nil {
		return false
	}
	list, _, err := d.Store.ListBuilds(ctx, b.OrganizationID, store.BuildFilter{BuildSettingID: b.BuildSettingID}, store.Page{Limit: fixesScan})
	if err != nil {
		d.Logger.ErrorContext(ctx, "list a setting's builds for build.fixed", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		return false
	}
	var last *kiln.Build
	for _, x := range list {
		if x.ID == b.ID || x.FinishedAt == nil || (x.Status != kiln.StatusComplete && x.Status != kiln.StatusFailed) {
			continue
		}
		before := x.FinishedAt.Before(*b.FinishedAt) || (x.FinishedAt.Equal(*b.FinishedAt) && x.ID < b.ID)
		if before && (last == nil || x.FinishedAt.After(*last.FinishedAt) || (x.FinishedAt.Equal(*last.FinishedAt) && x.ID > last.ID)) {
			last = x
		}
	}
	return last != nil && last.Status == kiln.StatusFailed
}

// wanted reports whether an active webhook asked for the event.
func wanted(hooks []*kiln.Webhook, event kiln.WebhookEvent) bool {
	return slices.ContainsFunc(hooks, func(h *kiln.Webhook) bool { return h.Active && slices.Contains(h.Events, event) })
}

// enqueue records a delivery of event for every active webhook of the organization that asked
// for it: kiln webhooks get the body render makes, chat webhooks the message describe makes in
// their service's shape (none when describe is nil); each body is made once.
func (d *Sender) enqueue(ctx context.Context, hooks []*kiln.Webhook, orgID string, event kiln.WebhookEvent,
	render func(ctx context.Context, now time.Time) ([]byte, error), describe func(ctx context.Context, event kiln.WebhookEvent) chat.Message) {
	now := d.now()
	payloads := map[kiln.WebhookFormat][]byte{}
	for _, h := range hooks {
		if !h.Active || !slices.Contains(h.Events, event) {
			continue
		}
		format := h.FormatOrKiln()
		if format.Chat() && (describe == nil || !slices.Contains(kiln.ChatEvents, event)) {
			continue
		}
		payload, ok := payloads[format]
		if !ok {
			var err error
			switch format {
			case kiln.FormatSlack:
				payload, err = chat.Slack(describe(ctx, event))
			case kiln.FormatDiscord:
				payload, err = chat.Discord(describe(ctx, event))
			default:
				payload, err = render(ctx, now)
			}
			if err != nil {
				d.Logger.ErrorContext(ctx, "render a webhook event", slog.String("format", string(format)), slog.String("error", err.Error()))
				continue
			}
			payloads[format] = payload
		}
		del := &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: orgID, WebhookID: h.ID, Event: event,
			Payload: payload, Status: kiln.DeliveryPending, CreatedAt: now, UpdatedAt: now}
		if err := d.Store.CreateWebhookDelivery(ctx, del); err != nil {
			d.Logger.ErrorContext(ctx, "record a webhook delivery", slog.String("webhook_id", h.ID), slog.String("error", err.Error()))
		}
	}
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
