package awsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// Deliver is the deliver Lambda's work: each message of the delivery queue is one job, and makes
// exactly one attempt (builds.AutoDeployer.AttemptOne, webhooks.Sender.AttemptOne), whose claim
// makes a job queued twice attempted once. An attempt that schedules a retry queues it, delayed
// until it is due; a retry due later than MaxQueueDelay is queued by the tick. An artifact is
// streamed from the artifact store to the receiver, never held.
type Deliver struct {
	bg     *background
	store  deliverStore
	queue  DeliveryQueue
	logger *slog.Logger
	now    func() time.Time
}

// deliverStore is what Deliver reads to see what an attempt left.
type deliverStore interface {
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
	GetWebhookDelivery(ctx context.Context, orgID, webhookID, id string) (*kiln.WebhookDelivery, error)
}

var _ deliverStore = store.Store(nil)

// NewDeliver wires the deliver handler on ready parts.
func NewDeliver(cfg BackgroundConfig, p Parts) (*Deliver, error) {
	if p.Queue == nil {
		return nil, errors.New("deliver: a delivery queue is required")
	}
	bg, err := newBackground(cfg, p)
	if err != nil {
		return nil, err
	}
	return &Deliver{bg: bg, store: p.Store, queue: p.Queue, logger: p.Logger, now: func() time.Time { return kiln.Now(p.Now) }}, nil
}

// Handle is the Lambda handler (SQS, batch size 1, partial batch responses): a message whose job
// could not be worked on (a store error, an unreadable message) is reported failed, so that SQS
// hands it again and, after its retries, to the dead-letter queue.
func (d *Deliver) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, r := range ev.Records {
		if err := d.handle(ctx, r.Body); err != nil {
			d.logger.ErrorContext(ctx, "delivery message", slog.String("message_id", r.MessageId), slog.String("error", err.Error()))
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	return resp, nil
}

// handle works one message.
func (d *Deliver) handle(ctx context.Context, body string) error {
	var m DeliveryMessage
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("unreadable message: %w", err)
	}
	if err := m.check(); err != nil {
		return err
	}
	switch m.Kind {
	case KindSweep:
		_, err := d.bg.queueDue(ctx, d.queue, d.now())
		return err
	case KindDeploy:
		return d.deploy(ctx, m)
	default:
		return d.webhook(ctx, m)
	}
}

// deploy makes one attempt of a build's auto deploy and queues its retry.
func (d *Deliver) deploy(ctx context.Context, m DeliveryMessage) error {
	before, err := d.store.GetBuild(ctx, m.OrganizationID, m.BuildID)
	if kiln.IsCode(err, kiln.ENotFound) {
		d.logger.WarnContext(ctx, "auto deploy of an unknown build", slog.String("build_id", m.BuildID))
		return nil
	}
	if err != nil {
		return fmt.Errorf("auto deploy: %w", err)
	}
	if err := d.bg.deliverer.AttemptOne(ctx, m.OrganizationID, m.BuildID); err != nil {
		return err
	}
	after, err := d.store.GetBuild(ctx, m.OrganizationID, m.BuildID)
	if err != nil {
		return fmt.Errorf("auto deploy: read the outcome: %w", err)
	}
	queued := after.AutoDeployStatus == kiln.AutoDeployPending || after.AutoDeployStatus == kiln.AutoDeployDelivering
	if queued && after.AutoDeployAttempts > before.AutoDeployAttempts {
		return d.retry(ctx, m, after.AutoDeployNextAt)
	}
	return nil
}

// webhook makes one attempt of a webhook delivery and queues its retry.
func (d *Deliver) webhook(ctx context.Context, m DeliveryMessage) error {
	before, err := d.store.GetWebhookDelivery(ctx, m.OrganizationID, m.WebhookID, m.DeliveryID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil // its webhook was deleted with its deliveries
	}
	if err != nil {
		return fmt.Errorf("webhook delivery: %w", err)
	}
	if err := d.bg.hooks.AttemptOne(ctx, m.OrganizationID, m.WebhookID, m.DeliveryID); err != nil {
		return err
	}
	after, err := d.store.GetWebhookDelivery(ctx, m.OrganizationID, m.WebhookID, m.DeliveryID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("webhook delivery: read the outcome: %w", err)
	}
	if after.Status == kiln.DeliveryPending && after.Attempts > before.Attempts {
		return d.retry(ctx, m, after.NextAttemptAt)
	}
	return nil
}

// retry queues the job's next attempt, due at; one due later than MaxQueueDelay is left to the
// tick, which queues it once it is due.
func (d *Deliver) retry(ctx context.Context, m DeliveryMessage, at time.Time) error {
	delay := max(at.Sub(d.now()), 0)
	if delay > MaxQueueDelay {
		return nil
	}
	if err := d.queue.Send(context.WithoutCancel(ctx), m, delay); err != nil {
		// The attempt is recorded; the tick queues the retry once it is due.
		d.logger.WarnContext(ctx, "queue a delivery retry", slog.String("kind", m.Kind), slog.String("error", err.Error()))
	}
	return nil
}

// NewAWSDeliver is the deliver Lambda's composition: its parts from AWS (LoadParts). It starts
// no build, so it needs no workflow.
func NewAWSDeliver(ctx context.Context, cfg BackgroundConfig, logger *slog.Logger) (*Deliver, error) {
	p, err := LoadParts(ctx, cfg, Secrets{MasterKey: true}, logger)
	if err != nil {
		return nil, err
	}
	return NewDeliver(cfg, p)
}
