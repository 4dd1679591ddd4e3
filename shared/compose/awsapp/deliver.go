package awsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// Deliver is the deliver Lambda's work: each message of the delivery queue is one job, and makes
// exactly one attempt (builds.AutoDeployer.AttemptOne, webhooks.Sender.AttemptOne), whose claim
// makes a job queued twice attempted once. An attempt that schedules a retry keeps its message:
// the message is hidden until the retry is due (ChangeMessageVisibility) and reported failed, so
// SQS hands it again then, and after the queue's maxReceiveCount receives moves it to the
// dead-letter queue. A delivery that failed for good is reported failed, shown again a second
// later, until SQS moves its message there. An artifact is streamed from the artifact store to the
// receiver, never held.
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

// Handle is the Lambda handler (SQS, partial batch responses): a message whose job could not be
// worked on (a store error, an unreadable message) is reported failed, so that SQS hands it
// again after the queue's visibility timeout; one whose delivery waits for a retry is reported
// failed, hidden until the retry is due; one whose delivery failed for good is reported failed,
// hidden a second, so that it reaches the dead-letter queue after maxReceiveCount receives.
func (d *Deliver) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, r := range ev.Records {
		if d.handleRecord(ctx, r) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	return resp, nil
}

// handleRecord works one message and says whether to report it failed (SQS keeps it).
func (d *Deliver) handleRecord(ctx context.Context, r events.SQSMessage) (keep bool) {
	log := d.logger.With(slog.String("message_id", r.MessageId))
	receives, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
	m, v, err := d.handle(ctx, r.Body, receives)
	switch {
	case err != nil:
		log.ErrorContext(ctx, "delivery message", slog.String("error", err.Error()))
		return true
	case v.failed:
		// The last attempt failed: seen again a second later, until SQS moves it to the
		// dead-letter queue (the DeliveryDeadLetterAlarm).
		log.WarnContext(ctx, "delivery failed for good; its message goes on to the dead-letter queue",
			slog.String("kind", m.Kind), slog.Int("receives", receives))
		if err := d.hide(ctx, r.ReceiptHandle, failedBounce); err != nil {
			log.WarnContext(ctx, "show a failed delivery's message again", slog.String("error", err.Error()))
		}
		return true
	case v.retry:
		wait := max(v.at.Sub(d.now()), 0)
		if wait <= maxVisibility {
			err := d.hide(ctx, r.ReceiptHandle, wait)
			if err == nil {
				return true
			}
			log.WarnContext(ctx, "hide a delivery message until its retry", slog.String("error", err.Error()))
		}
		// The message cannot wait in the queue: a new one, delayed, or the tick's.
		d.retry(ctx, m, v.at)
	}
	return false
}

// failedBounce is how long the message of a delivery failed for good is hidden between its
// receives on its way to the dead-letter queue: short, so that the alarm comes soon, but not a
// busy loop should the queue have no redrive policy.
const failedBounce = time.Second

// maxVisibility is the longest SQS hides a received message (ChangeMessageVisibility: 12 hours).
const maxVisibility = 12 * time.Hour

// hide hides a received message for wait, rounded up to a second (SQS takes whole seconds).
func (d *Deliver) hide(ctx context.Context, receiptHandle string, wait time.Duration) error {
	h, ok := d.queue.(MessageHider)
	if !ok || receiptHandle == "" {
		return errors.New("the delivery queue cannot change a message's visibility")
	}
	return h.Hide(context.WithoutCancel(ctx), receiptHandle, wait)
}

// verdict is what a message's attempt left: a retry due at, or a delivery failed for good.
type verdict struct {
	retry  bool
	at     time.Time
	failed bool
}

// handle works one message, received the receives-th time.
func (d *Deliver) handle(ctx context.Context, body string, receives int) (DeliveryMessage, verdict, error) {
	var m DeliveryMessage
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, verdict{}, fmt.Errorf("unreadable message: %w", err)
	}
	if err := m.check(); err != nil {
		return m, verdict{}, err
	}
	switch m.Kind {
	case KindSweep:
		_, err := d.bg.queueDue(ctx, d.queue, d.now())
		return m, verdict{}, err
	case KindDeploy:
		v, err := d.deploy(ctx, m, receives)
		return m, v, err
	default:
		v, err := d.webhook(ctx, m, receives)
		return m, v, err
	}
}

// outcome judges an attempt from what it left: attempted says the attempt was made (its count
// grew), live that the delivery waits for another, failed that it ended failed; wasFailed that it
// had failed before this message's attempt. A message received before whose delivery has failed
// is the one whose attempt failed it, handed again on its way to the dead-letter queue.
func outcome(attempted, live, failed, wasFailed bool, next time.Time, receives int) verdict {
	switch {
	case live && attempted:
		return verdict{retry: true, at: next}
	case failed && (!wasFailed || receives > 1):
		return verdict{failed: true}
	}
	return verdict{}
}

// deploy makes one attempt of a build's auto deploy.
func (d *Deliver) deploy(ctx context.Context, m DeliveryMessage, receives int) (verdict, error) {
	before, err := d.store.GetBuild(ctx, m.OrganizationID, m.BuildID)
	if kiln.IsCode(err, kiln.ENotFound) {
		d.logger.WarnContext(ctx, "auto deploy of an unknown build", slog.String("build_id", m.BuildID))
		return verdict{}, nil
	}
	if err != nil {
		return verdict{}, fmt.Errorf("auto deploy: %w", err)
	}
	if err := d.bg.deliverer.AttemptOne(ctx, m.OrganizationID, m.BuildID); err != nil {
		return verdict{}, err
	}
	after, err := d.store.GetBuild(ctx, m.OrganizationID, m.BuildID)
	if err != nil {
		return verdict{}, fmt.Errorf("auto deploy: read the outcome: %w", err)
	}
	live := after.AutoDeployStatus == kiln.AutoDeployPending || after.AutoDeployStatus == kiln.AutoDeployDelivering
	return outcome(after.AutoDeployAttempts > before.AutoDeployAttempts, live, after.AutoDeployStatus == kiln.AutoDeployFailed,
		before.AutoDeployStatus == kiln.AutoDeployFailed, after.AutoDeployNextAt, receives), nil
}

// webhook makes one attempt of a webhook delivery.
func (d *Deliver) webhook(ctx context.Context, m DeliveryMessage, receives int) (verdict, error) {
	before, err := d.store.GetWebhookDelivery(ctx, m.OrganizationID, m.WebhookID, m.DeliveryID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return verdict{}, nil // its webhook was deleted with its deliveries
	}
	if err != nil {
		return verdict{}, fmt.Errorf("webhook delivery: %w", err)
	}
	if err := d.bg.hooks.AttemptOne(ctx, m.OrganizationID, m.WebhookID, m.DeliveryID); err != nil {
		return verdict{}, err
	}
	after, err := d.store.GetWebhookDelivery(ctx, m.OrganizationID, m.WebhookID, m.DeliveryID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return verdict{}, nil
	}
	if err != nil {
		return verdict{}, fmt.Errorf("webhook delivery: read the outcome: %w", err)
	}
	return outcome(after.Attempts > before.Attempts, after.Status == kiln.DeliveryPending, after.Status == kiln.DeliveryFailed,
		before.Status == kiln.DeliveryFailed, after.NextAttemptAt, receives), nil
}

// retry queues the job's next attempt as a new message, due at: when its own message cannot
// wait for it. One due later than MaxQueueDelay is left to the tick, which queues it once it is
// due.
func (d *Deliver) retry(ctx context.Context, m DeliveryMessage, at time.Time) {
	delay := max(at.Sub(d.now()), 0)
	if delay > MaxQueueDelay {
		return
	}
	if err := d.queue.Send(context.WithoutCancel(ctx), m, delay); err != nil {
		// The attempt is recorded; the tick queues the retry once it is due.
		d.logger.WarnContext(ctx, "queue a delivery retry", slog.String("kind", m.Kind), slog.String("error", err.Error()))
	}
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
