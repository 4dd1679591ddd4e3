package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/delivery"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// leaseMargin is added to an attempt's timeout for its lease: an attempt whose outcome was never
// recorded (the process died) is due again this long after its timeout.
const leaseMargin = 30 * time.Second

// Notify wakes the sender, or Wake when set: a delivery was recorded.
func (d *Sender) Notify() {
	if d.Wake != nil {
		d.Wake.Notify()
		return
	}
	d.scheduler.Notify()
}

// Run sends due deliveries, organizations in turn, until ctx ends.
func (d *Sender) Run(ctx context.Context) {
	d.scheduler.Queue, d.scheduler.Workers, d.scheduler.Now, d.scheduler.Logger = d, d.Workers, d.now, d.Logger
	d.scheduler.Run(ctx)
}

// Due lists the due deliveries (deploy.Queue).
func (d *Sender) Due(ctx context.Context, now time.Time, perOrg, limit int) ([]delivery.Job, error) {
	ds, err := d.Store.DueWebhookDeliveries(ctx, now, perOrg, limit)
	if err != nil {
		return nil, err
	}
	jobs := make([]delivery.Job, len(ds))
	for i, x := range ds {
		jobs[i] = delivery.Job{OrgID: x.OrganizationID, ID: x.ID, Ref: x.WebhookID}
	}
	return jobs, nil
}

// Attempt is AttemptOne for the scheduler (deploy.Queue).
func (d *Sender) Attempt(ctx context.Context, j delivery.Job) {
	if err := d.AttemptOne(ctx, j.OrgID, j.Ref, j.ID); err != nil && ctx.Err() == nil {
		d.Logger.ErrorContext(ctx, "webhook delivery attempt", slog.String("delivery_id", j.ID), slog.String("org_id", j.OrgID),
			slog.String("error", err.Error()))
	}
}

// AttemptOne makes one attempt of a pending delivery that is due, and records its outcome:
// succeeded, failed, or pending with the next attempt's due time. It first claims the attempt (a
// write conditional on the due time it read), so a delivery listed to two workers is sent once; a
// delivery not due, not pending or claimed elsewhere is left alone (nil). This is the unit of work
// a Lambda runs.
func (d *Sender) AttemptOne(ctx context.Context, orgID, webhookID, deliveryID string) error {
	now := d.now()
	del, err := d.Store.GetWebhookDelivery(ctx, orgID, webhookID, deliveryID)
	if err != nil {
		return fmt.Errorf("webhook delivery: %w", err)
	}
	if del.Status != kiln.DeliveryPending || del.NextAttemptAt.After(now) {
		return nil
	}
	due := del.NextAttemptAt
	record := func(ctx context.Context, x *kiln.WebhookDelivery, expected time.Time) error {
		x.UpdatedAt = d.now()
		return d.Store.RecordWebhookDelivery(ctx, x, expected)
	}
	fail := func(msg string) error {
		end := *del
		end.Status, end.Error, end.NextAttemptAt = kiln.DeliveryFailed, msg, time.Time{}
		return ignoreTaken(record(ctx, &end, due))
	}
	h, err := d.Store.GetWebhook(ctx, orgID, webhookID)
	if err != nil {
		if kiln.IsCode(err, kiln.ENotFound) {
			return fail("the webhook was deleted")
		}
		return err
	}
	secret, err := d.Sealer.Open(h.Secret, SecretAD(h.ID))
	if err != nil {
		return fail("the webhook's secret cannot be read")
	}
	// A kiln webhook's deliveries are signed; a chat webhook's sealed secret is its URL, and the
	// service takes its message as it is.
	target, header, body := h.URL, http.Header{}, del.Payload
	if h.FormatOrKiln().Chat() {
		target = string(secret)
	} else {
		body = d.stamp(ctx, del, now)
		sig := Sign(secret, body)
		header.Set("X-Kiln-Event", string(del.Event))
		header.Set("X-Kiln-Delivery", del.ID)
		header.Set("X-Kiln-Signature", sig)
		if h.SignatureHeader != "" {
			// As the webhook spells it: a receiver that reads raw header names finds it.
			header[h.SignatureHeader] = []string{sig}
		}
	}
	claimed := *del
	claimed.Attempts++
	claimed.NextAttemptAt = now.Add(delivery.AttemptTimeout(int64(len(del.Payload))) + leaseMargin)
	if err := record(ctx, &claimed, due); err != nil {
		return ignoreTaken(err)
	}
	n := claimed.Attempts
	res := delivery.PostJSON(ctx, d.Client, target, header, body, func(cause string) {
		d.Logger.WarnContext(ctx, "webhook delivery attempt failed", slog.String("delivery_id", del.ID),
			slog.String("org_id", orgID), slog.Int("attempt", n), slog.String("cause", cause))
	})
	out := claimed
	wait, again := delivery.Schedule(res, n, d.Attempts, d.Backoff)
	out.ResponseStatus = res.Status
	switch {
	case ctx.Err() != nil:
		// Stopping: due again at once, so that it is sent after the restart.
		out.NextAttemptAt = time.Time{}
	case res.Succeeded:
		out.Status, out.Error, out.NextAttemptAt = kiln.DeliverySucceeded, "", time.Time{}
	case again:
		out.Error, out.NextAttemptAt = res.Error, d.now().Add(wait)
	default:
		out.Status, out.Error, out.NextAttemptAt = kiln.DeliveryFailed, res.Error, time.Time{}
	}
	return ignoreTaken(record(context.WithoutCancel(ctx), &out, claimed.NextAttemptAt))
}

// stamp is the body of an attempt of a kiln webhook's delivery: the stored payload as Stamp
// finishes it.
func (d *Sender) stamp(ctx context.Context, del *kiln.WebhookDelivery, now time.Time) []byte {
	if d.Stamp == nil {
		return del.Payload
	}
	body, err := d.Stamp(ctx, del.Event, del.Payload, now)
	if err != nil {
		d.Logger.WarnContext(ctx, "finish a webhook payload; sent as stored", slog.String("delivery_id", del.ID),
			slog.String("org_id", del.OrganizationID), slog.String("error", err.Error()))
		return del.Payload
	}
	return body
}

// ignoreTaken drops invalid_state: another worker claimed or recorded the attempt.
func ignoreTaken(err error) error {
	if kiln.IsCode(err, kiln.EInvalidState) {
		return nil
	}
	return err
}
