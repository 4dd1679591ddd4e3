package awsapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/delivery"
)

// Kinds of delivery messages.
const (
	// KindDeploy is one attempt of a build's auto deploy.
	KindDeploy = "deploy"
	// KindWebhook is one attempt of an org webhook delivery.
	KindWebhook = "webhook"
	// KindSweep asks for every due delivery to be queued, each as its own message: what a build
	// that became ready for auto deploy sends, so that it does not wait for the next tick.
	KindSweep = "sweep"
)

// DeliveryMessage is the body of one message of the delivery queue: one job.
type DeliveryMessage struct {
	Kind           string `json:"kind"`
	OrganizationID string `json:"organizationId,omitempty"`
	BuildID        string `json:"buildId,omitempty"`
	WebhookID      string `json:"webhookId,omitempty"`
	DeliveryID     string `json:"deliveryId,omitempty"`
}

// check says what a message lacks.
func (m DeliveryMessage) check() error {
	switch m.Kind {
	case KindDeploy:
		if m.OrganizationID == "" || m.BuildID == "" {
			return errors.New("a deploy message needs organizationId and buildId")
		}
	case KindWebhook:
		if m.OrganizationID == "" || m.WebhookID == "" || m.DeliveryID == "" {
			return errors.New("a webhook message needs organizationId, webhookId and deliveryId")
		}
	case KindSweep:
	default:
		return fmt.Errorf("unknown kind %q (want deploy, webhook or sweep)", m.Kind)
	}
	return nil
}

// MaxQueueDelay is the longest a queued message can wait (SQS DelaySeconds); a retry due later is
// queued by the tick once it is due.
const MaxQueueDelay = 900 * time.Second

// DeliveryQueue takes delivery messages, each handed to the deliver handler after delay (at most
// MaxQueueDelay). SQS in AWS; kiln aws-local passes an in-process one.
type DeliveryQueue interface {
	Send(ctx context.Context, m DeliveryMessage, delay time.Duration) error
}

// SQSSender is the part of the SQS client the queue uses.
type SQSSender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// SQSQueue is the delivery queue on SQS.
type SQSQueue struct {
	Client SQSSender
	URL    string
	Logger *slog.Logger
}

// Send sends one message, delayed by delay rounded up to a second and capped at MaxQueueDelay.
func (q *SQSQueue) Send(ctx context.Context, m DeliveryMessage, delay time.Duration) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = q.Client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(q.URL), MessageBody: aws.String(string(body)), DelaySeconds: delaySeconds(delay),
	})
	if err != nil {
		return fmt.Errorf("queue a %s delivery: %w", m.Kind, err)
	}
	return nil
}

// MessageHider hides a received message of the queue for a while (SQS ChangeMessageVisibility):
// the deliver handler keeps the message of a delivery that waits for a retry, hidden until the
// retry is due.
type MessageHider interface {
	Hide(ctx context.Context, receiptHandle string, wait time.Duration) error
}

// SQSVisibility is the part of the SQS client Hide uses.
type SQSVisibility interface {
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

var _ MessageHider = (*SQSQueue)(nil)

// Hide makes a received message visible again after wait, rounded up to a second and capped at
// SQS's 12 hours.
func (q *SQSQueue) Hide(ctx context.Context, receiptHandle string, wait time.Duration) error {
	c, ok := q.Client.(SQSVisibility)
	if !ok {
		return errors.New("hide a delivery message: the SQS client cannot change a message's visibility")
	}
	wait = min(max(wait, 0), maxVisibility)
	_, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(q.URL), ReceiptHandle: aws.String(receiptHandle),
		VisibilityTimeout: int32((wait + time.Second - 1) / time.Second),
	})
	if err != nil {
		return fmt.Errorf("hide a delivery message: %w", err)
	}
	return nil
}

// delaySeconds is a delay as SQS takes it: whole seconds, rounded up, 0..900.
func delaySeconds(d time.Duration) int32 {
	d = min(max(d, 0), MaxQueueDelay)
	return int32((d + time.Second - 1) / time.Second)
}

// sweepTimeout bounds the sending of a sweep message by a waker.
const sweepTimeout = 10 * time.Second

// QueueWaker is the Fanout's Deliveries waker in AWS: a build ready for auto deploy sends a sweep
// message, so its delivery starts within seconds instead of at the next tick. Nil for no queue.
func QueueWaker(q DeliveryQueue, logger *slog.Logger) builds.Waker {
	if q == nil {
		return nil
	}
	return queueWaker{q: q, logger: logger}
}

type queueWaker struct {
	q      DeliveryQueue
	logger *slog.Logger
}

// Notify sends the sweep message before it returns: a Lambda may be frozen right after.
func (w queueWaker) Notify() {
	ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
	defer cancel()
	if err := w.q.Send(ctx, DeliveryMessage{Kind: KindSweep}, 0); err != nil && w.logger != nil {
		// The next tick queues the delivery all the same.
		w.logger.WarnContext(ctx, "queue a delivery sweep", slog.String("error", err.Error()))
	}
}

// Due lists limits, per tick or sweep: organizations take turns within them, and what is left is
// queued by the next one.
const (
	duePerOrg = 20
	dueLimit  = 200
)

// dueLister lists due deliveries (builds.AutoDeployer and webhooks.Sender).
type dueLister interface {
	Due(ctx context.Context, now time.Time, perOrg, limit int) ([]delivery.Job, error)
}

// queueDue sends one message per due auto deploy and due webhook delivery, and returns how many
// it sent. A job queued twice (by two ticks, or a tick and a sweep) is attempted once: the
// attempt claims it first.
func (b *background) queueDue(ctx context.Context, q DeliveryQueue, now time.Time) (int, error) {
	sent := 0
	var errs []error
	for _, src := range []struct {
		kind string
		list dueLister
	}{{KindDeploy, b.deliverer}, {KindWebhook, b.hooks}} {
		jobs, err := src.list.Due(ctx, now, duePerOrg, dueLimit)
		if err != nil {
			errs = append(errs, fmt.Errorf("list due %s deliveries: %w", src.kind, err))
			continue
		}
		for _, j := range jobs {
			m := DeliveryMessage{Kind: src.kind, OrganizationID: j.OrgID}
			if src.kind == KindDeploy {
				m.BuildID = j.ID
			} else {
				m.WebhookID, m.DeliveryID = j.Ref, j.ID
			}
			if err := q.Send(ctx, m, 0); err != nil {
				errs = append(errs, err)
				continue
			}
			sent++
		}
	}
	return sent, errors.Join(errs...)
}
