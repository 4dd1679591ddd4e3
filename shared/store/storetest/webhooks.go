package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// DueWebhookDeliveries, like the other scans across organizations, sees the deliveries of every
// subtest when the store is shared. So its tests date their deliveries long before any test ran,
// and every test that makes deliveries fails those still pending when it ends (see deliveryMaker),
// leaving no pending delivery behind.

// newWebhook builds (without storing) an active webhook of the organization.
func newWebhook(orgID string) *kiln.Webhook {
	at := now()
	id := kiln.NewID()
	return &kiln.Webhook{
		ID:              id,
		OrganizationID:  orgID,
		URL:             "https://hooks.example.com/kiln/" + id,
		Events:          []kiln.WebhookEvent{kiln.EventBuildComplete, kiln.EventBuildCreated, kiln.EventBuildFailed},
		Active:          true,
		SignatureHeader: "X-BuildPixel-Signature",
		Secret:          []byte{0x00, 0x01, 0xfe, 0xff, 's', 'e', 'c', 0x00},
		CreatedAt:       at,
		UpdatedAt:       at,
	}
}

// createWebhook stores a fresh webhook of the organization.
func createWebhook(t *testing.T, s store.Store, orgID string) *kiln.Webhook {
	t.Helper()
	w := newWebhook(orgID)
	wantOK(t, s.CreateWebhook(t.Context(), w), "CreateWebhook")
	return w
}

// deliveryMaker makes deliveries whose ids (which order the sender's queue) are of consecutive
// milliseconds from base on, and fails those still pending when the test ends.
type deliveryMaker struct{ *past[*kiln.WebhookDelivery] }

func newDeliveryMaker(t *testing.T, s store.Store, base time.Time) deliveryMaker {
	return deliveryMaker{newPast(t, s, base, func(ctx context.Context, d *kiln.WebhookDelivery) {
		got, err := s.GetWebhookDelivery(ctx, d.OrganizationID, d.WebhookID, d.ID)
		if err != nil || got.Status != kiln.DeliveryPending {
			return
		}
		got.Status, got.Error = kiln.DeliveryFailed, "test ended"
		_ = s.UpdateWebhookDelivery(ctx, got)
	})}
}

// next makes (without storing) a delivery of w in status, dated one millisecond after the previous
// one.
func (m deliveryMaker) next(w *kiln.Webhook, status kiln.DeliveryStatus) *kiln.WebhookDelivery {
	id, at := m.tick()
	d := &kiln.WebhookDelivery{
		ID:             id,
		OrganizationID: w.OrganizationID,
		WebhookID:      w.ID,
		Event:          kiln.EventBuildComplete,
		Payload:        []byte(`{"event":"build.complete","build":{"id":"` + id + `"},  "note":"caf\u00e9 ☕"}` + "\n"),
		Status:         status,
		CreatedAt:      at,
		UpdatedAt:      at,
	}
	if status != kiln.DeliveryPending {
		d.Attempts, d.ResponseStatus = 1, 200
		if status == kiln.DeliveryFailed {
			d.ResponseStatus, d.Error = 500, "HTTP 500"
		}
	}
	m.made = append(m.made, d)
	return d
}

// create stores the next delivery of w in status.
func (m deliveryMaker) create(w *kiln.Webhook, status kiln.DeliveryStatus) *kiln.WebhookDelivery {
	m.t.Helper()
	d := m.next(w, status)
	wantOK(m.t, m.s.CreateWebhookDelivery(m.t.Context(), d), "CreateWebhookDelivery")
	return d
}

// pendingDeliveries returns DueWebhookDeliveries(farFuture, MaxLimit, limit): every pending
// delivery, checking that every delivery is pending, that they come earliest due (then smallest
// id) first and that there are no more than the limit (read as store.MaxLimit outside
// 1..MaxLimit).
func pendingDeliveries(t *testing.T, s store.Store, limit int) []*kiln.WebhookDelivery {
	t.Helper()
	ds, err := s.DueWebhookDeliveries(t.Context(), farFuture, store.MaxLimit, limit)
	wantOK(t, err, "DueWebhookDeliveries")
	wantDue(t, "DueWebhookDeliveries", limit, ds, func(d *kiln.WebhookDelivery) due {
		v := due{at: d.NextAttemptAt, id: d.ID}
		if d.Status != kiln.DeliveryPending {
			v.fault = fmt.Sprintf("delivery %s is %s", d.ID, d.Status)
		}
		return v
	})
	return ds
}

// wantPendingHead fails the test unless the pending deliveries start with want (whole deliveries).
func wantPendingHead(t *testing.T, s store.Store, want ...*kiln.WebhookDelivery) {
	t.Helper()
	wantHead(t, "pending deliveries", pendingDeliveries(t, s, store.MaxLimit), want)
}

// wantNotPending fails the test if d is listed as pending.
func wantNotPending(t *testing.T, s store.Store, d *kiln.WebhookDelivery) {
	t.Helper()
	for _, p := range pendingDeliveries(t, s, store.MaxLimit) {
		if p.ID == d.ID {
			t.Fatalf("delivery %s (%s) is listed as pending", d.ID, d.Status)
		}
	}
}

func deliveryID(d *kiln.WebhookDelivery) string { return d.ID }

// webhookDeliveryList is the paged list of one webhook's deliveries; each added delivery comes
// with one of another webhook of the same organization, which the list must leave out.
var webhookDeliveryList = pagedList{"WebhookDeliveries", func(t *testing.T, s store.Store) (func() string, []string, lister[string]) {
	f := createOrganization(t, s)
	w, other := createWebhook(t, s, f.org.ID), createWebhook(t, s, f.org.ID)
	m := newDeliveryMaker(t, s, now())
	add := func() string {
		m.create(other, kiln.DeliverySucceeded)
		return m.create(w, kiln.DeliveryFailed).ID
	}
	return add, nil, idsOf(func(p store.Page) ([]*kiln.WebhookDelivery, string, error) {
		return s.ListWebhookDeliveries(t.Context(), f.org.ID, w.ID, p)
	}, deliveryID)
}}

func testWebhooks(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CRUD", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		w := newWebhook(f.org.ID)
		w.Events = []kiln.WebhookEvent{kiln.EventBuildSuperseded, kiln.EventBuildCreated} // order kept, not sorted
		w.Active = false
		wantOK(t, s.CreateWebhook(ctx, w), "CreateWebhook")
		got, err := s.GetWebhook(ctx, f.org.ID, w.ID)
		wantOK(t, err, "GetWebhook")
		wantEqual(t, "webhook", got, w)
		if got.Active {
			t.Fatalf("webhook created inactive reads active")
		}

		dup := newWebhook(f.org.ID)
		dup.ID = w.ID
		wantCode(t, s.CreateWebhook(ctx, dup), kiln.EConflict, "CreateWebhook with a taken id")
		wantCode(t, func() error { _, err := s.GetWebhook(ctx, f.org.ID, kiln.NewID()); return err }(), kiln.ENotFound, "GetWebhook of a missing id")

		// Update replaces url, events, active, secret and updatedAt, and nothing else.
		upd := *w
		upd.URL = "https://other.example.com/hook"
		upd.Events = []kiln.WebhookEvent{kiln.EventBuildFailed}
		upd.Active = true
		upd.Secret = []byte{0xff, 0x00, 0x7f}
		upd.UpdatedAt = now().Add(time.Minute)
		upd.CreatedAt = now().Add(time.Hour)
		wantOK(t, s.UpdateWebhook(ctx, &upd), "UpdateWebhook")
		got, err = s.GetWebhook(ctx, f.org.ID, w.ID)
		wantOK(t, err, "GetWebhook after update")
		want := upd
		want.CreatedAt = w.CreatedAt
		wantEqual(t, "updated webhook", got, &want)

		// And back: inactive, no events, no secret.
		upd2 := want
		upd2.Active, upd2.Events, upd2.Secret = false, nil, nil
		wantOK(t, s.UpdateWebhook(ctx, &upd2), "UpdateWebhook to empty")
		got, err = s.GetWebhook(ctx, f.org.ID, w.ID)
		wantOK(t, err, "GetWebhook after second update")
		wantEqual(t, "emptied webhook", got, &upd2)

		missing := newWebhook(f.org.ID)
		wantCode(t, s.UpdateWebhook(ctx, missing), kiln.ENotFound, "UpdateWebhook of a missing webhook")
		wantCode(t, s.DeleteWebhook(ctx, f.org.ID, missing.ID), kiln.ENotFound, "DeleteWebhook of a missing webhook")

		wantOK(t, s.DeleteWebhook(ctx, f.org.ID, w.ID), "DeleteWebhook")
		_, err = s.GetWebhook(ctx, f.org.ID, w.ID)
		wantCode(t, err, kiln.ENotFound, "GetWebhook after delete")
		wantCode(t, s.DeleteWebhook(ctx, f.org.ID, w.ID), kiln.ENotFound, "DeleteWebhook twice")
		wantCode(t, s.UpdateWebhook(ctx, &upd2), kiln.ENotFound, "UpdateWebhook after delete")
	})

	t.Run("Format", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		// A webhook made before formats has none (""), and reads back so.
		plain := createWebhook(t, s, f.org.ID)
		var made []*kiln.Webhook
		for _, format := range []kiln.WebhookFormat{kiln.FormatKiln, kiln.FormatSlack, kiln.FormatDiscord} {
			w := newWebhook(f.org.ID)
			w.Format = format
			w.URL = "https://hooks.slack.com/…" + string(format)
			w.Secret = []byte("sealed\x00url " + string(format))
			wantOK(t, s.CreateWebhook(ctx, w), "CreateWebhook "+string(format))
			got, err := s.GetWebhook(ctx, f.org.ID, w.ID)
			wantOK(t, err, "GetWebhook")
			wantEqual(t, "webhook of format "+string(format), got, w)
			made = append(made, w)
		}
		got, err := s.GetWebhook(ctx, f.org.ID, plain.ID)
		wantOK(t, err, "GetWebhook")
		if got.Format != "" {
			t.Fatalf("a webhook made without a format reads format %q", got.Format)
		}
		// Update keeps the format, whatever the webhook given says.
		upd := *made[1]
		// ...and an emptied signature header is gone.
		upd.Format, upd.URL, upd.UpdatedAt, upd.SignatureHeader = kiln.FormatDiscord, "https://hooks.slack.com/…abcd", now().Add(time.Minute), ""
		wantOK(t, s.UpdateWebhook(ctx, &upd), "UpdateWebhook")
		got, err = s.GetWebhook(ctx, f.org.ID, upd.ID)
		wantOK(t, err, "GetWebhook after update")
		want := upd
		want.Format = kiln.FormatSlack
		wantEqual(t, "updated slack webhook", got, &want)
		ws, err := s.ListWebhooks(ctx, f.org.ID)
		wantOK(t, err, "ListWebhooks")
		wantEqual(t, "listed webhooks", ws, []*kiln.Webhook{plain, made[0], &want, made[2]})
	})

	t.Run("ListOldestFirst", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		ws, err := s.ListWebhooks(ctx, f.org.ID)
		wantOK(t, err, "ListWebhooks of a new organization")
		if len(ws) != 0 {
			t.Fatalf("a new organization has %d webhooks", len(ws))
		}
		var want []*kiln.Webhook
		for range 4 {
			want = append(want, createWebhook(t, s, f.org.ID))
		}
		ws, err = s.ListWebhooks(ctx, f.org.ID)
		wantOK(t, err, "ListWebhooks")
		wantEqual(t, "webhooks, oldest first", ws, want)
	})

	t.Run("OtherOrganizations", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		a, b := createOrganization(t, s), createOrganization(t, s)
		w := createWebhook(t, s, a.org.ID)
		m := newDeliveryMaker(t, s, now())
		d := m.create(w, kiln.DeliverySucceeded)

		_, err := s.GetWebhook(ctx, b.org.ID, w.ID)
		wantCode(t, err, kiln.ENotFound, "GetWebhook from another organization")
		ws, err := s.ListWebhooks(ctx, b.org.ID)
		wantOK(t, err, "ListWebhooks of another organization")
		if len(ws) != 0 {
			t.Fatalf("another organization lists %d webhooks", len(ws))
		}
		stolen := *w
		stolen.OrganizationID, stolen.URL = b.org.ID, "https://evil.example.com/"
		wantCode(t, s.UpdateWebhook(ctx, &stolen), kiln.ENotFound, "UpdateWebhook from another organization")
		wantCode(t, s.DeleteWebhook(ctx, b.org.ID, w.ID), kiln.ENotFound, "DeleteWebhook from another organization")

		_, err = s.GetWebhookDelivery(ctx, b.org.ID, w.ID, d.ID)
		wantCode(t, err, kiln.ENotFound, "GetWebhookDelivery from another organization")
		ds, _, err := s.ListWebhookDeliveries(ctx, b.org.ID, w.ID, store.Page{})
		wantOK(t, err, "ListWebhookDeliveries of another organization")
		if len(ds) != 0 {
			t.Fatalf("another organization lists %d deliveries", len(ds))
		}
		stolenD := *d
		stolenD.OrganizationID, stolenD.Status = b.org.ID, kiln.DeliveryFailed
		wantCode(t, s.UpdateWebhookDelivery(ctx, &stolenD), kiln.ENotFound, "UpdateWebhookDelivery from another organization")
		// A delivery under another organization's webhook: that webhook is not found there.
		cross := m.next(w, kiln.DeliveryPending)
		cross.OrganizationID = b.org.ID
		wantCode(t, s.CreateWebhookDelivery(ctx, cross), kiln.ENotFound, "CreateWebhookDelivery for another organization's webhook")

		got, err := s.GetWebhook(ctx, a.org.ID, w.ID)
		wantOK(t, err, "GetWebhook")
		wantEqual(t, "webhook after the other organization's attempts", got, w)
		gotD, err := s.GetWebhookDelivery(ctx, a.org.ID, w.ID, d.ID)
		wantOK(t, err, "GetWebhookDelivery")
		wantEqual(t, "delivery after the other organization's attempts", gotD, d)
	})

	t.Run("Deliveries", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		w, other := createWebhook(t, s, f.org.ID), createWebhook(t, s, f.org.ID)
		m := newDeliveryMaker(t, s, now())

		orphan := m.next(newWebhook(f.org.ID), kiln.DeliveryPending)
		wantCode(t, s.CreateWebhookDelivery(ctx, orphan), kiln.ENotFound, "CreateWebhookDelivery of a missing webhook")
		_, err := s.GetWebhookDelivery(ctx, f.org.ID, orphan.WebhookID, orphan.ID)
		wantCode(t, err, kiln.ENotFound, "GetWebhookDelivery of the refused delivery")

		d := m.create(w, kiln.DeliveryPending)
		got, err := s.GetWebhookDelivery(ctx, f.org.ID, w.ID, d.ID)
		wantOK(t, err, "GetWebhookDelivery")
		wantEqual(t, "delivery", got, d)
		if string(got.Payload) != string(d.Payload) {
			t.Fatalf("payload %q, want byte for byte %q", got.Payload, d.Payload)
		}
		_, err = s.GetWebhookDelivery(ctx, f.org.ID, other.ID, d.ID)
		wantCode(t, err, kiln.ENotFound, "GetWebhookDelivery under another webhook")
		dup := *d
		dup.Payload = []byte(`{}`)
		wantCode(t, s.CreateWebhookDelivery(ctx, &dup), kiln.EConflict, "CreateWebhookDelivery with a taken id")

		// Update replaces status, attempts, responseStatus, error, nextAttemptAt and updatedAt, and
		// nothing else.
		upd := *d
		upd.Status, upd.Attempts, upd.ResponseStatus, upd.Error = kiln.DeliveryPending, 1, 503, "HTTP 503"
		upd.NextAttemptAt = now().Add(time.Minute)
		upd.UpdatedAt = now().Add(time.Second)
		upd.Event, upd.Payload, upd.CreatedAt = kiln.EventBuildFailed, []byte(`{"changed":true}`), now().Add(time.Hour)
		wantOK(t, s.UpdateWebhookDelivery(ctx, &upd), "UpdateWebhookDelivery (retry)")
		want := upd
		want.Event, want.Payload, want.CreatedAt = d.Event, d.Payload, d.CreatedAt
		got, err = s.GetWebhookDelivery(ctx, f.org.ID, w.ID, d.ID)
		wantOK(t, err, "GetWebhookDelivery after update")
		wantEqual(t, "retried delivery", got, &want)

		want.Status, want.Attempts, want.ResponseStatus, want.Error = kiln.DeliverySucceeded, 2, 204, ""
		want.UpdatedAt = now().Add(2 * time.Second)
		wantOK(t, s.UpdateWebhookDelivery(ctx, &want), "UpdateWebhookDelivery (succeeded)")
		got, err = s.GetWebhookDelivery(ctx, f.org.ID, w.ID, d.ID)
		wantOK(t, err, "GetWebhookDelivery after success")
		wantEqual(t, "succeeded delivery", got, &want)

		missing := m.next(w, kiln.DeliveryFailed)
		wantCode(t, s.UpdateWebhookDelivery(ctx, missing), kiln.ENotFound, "UpdateWebhookDelivery of a missing delivery")
		wrongHook := want
		wrongHook.WebhookID = other.ID
		wantCode(t, s.UpdateWebhookDelivery(ctx, &wrongHook), kiln.ENotFound, "UpdateWebhookDelivery under another webhook")

		// Newest first, only this webhook's.
		var ids []string
		ids = append(ids, d.ID)
		m.create(other, kiln.DeliverySucceeded)
		for _, st := range []kiln.DeliveryStatus{kiln.DeliveryFailed, kiln.DeliverySucceeded, kiln.DeliveryPending} {
			ids = append(ids, m.create(w, st).ID)
		}
		list, next, err := s.ListWebhookDeliveries(ctx, f.org.ID, w.ID, store.Page{})
		wantOK(t, err, "ListWebhookDeliveries")
		if next != "" {
			t.Fatalf("ListWebhookDeliveries: next %q for a short list", next)
		}
		got2 := make([]string, len(list))
		for i, x := range list {
			got2[i] = x.ID
		}
		wantIDs(t, "deliveries, newest first", got2, newestFirst(ids))
		wantEqual(t, "listed delivery", list[len(list)-1], &want)
	})

	t.Run("PendingOldestFirstAcrossOrganizations", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		var hooks []*kiln.Webhook
		for range 3 {
			f := createOrganization(t, s)
			hooks = append(hooks, createWebhook(t, s, f.org.ID))
		}
		m := newDeliveryMaker(t, s, time.Date(2006, 1, 1, 0, 0, 0, 0, time.UTC))
		statuses := []kiln.DeliveryStatus{kiln.DeliveryPending, kiln.DeliverySucceeded, kiln.DeliveryPending,
			kiln.DeliveryFailed, kiln.DeliveryPending}
		made := make([]*kiln.WebhookDelivery, 15)
		var pending []*kiln.WebhookDelivery
		for i := range made {
			made[i] = m.next(hooks[i%3], statuses[i%5])
			if made[i].Status == kiln.DeliveryPending {
				pending = append(pending, made[i])
			}
		}
		for i := range made {
			d := made[(i*7+4)%len(made)] // 7 is prime to 15: every delivery once, out of order
			wantOK(t, s.CreateWebhookDelivery(ctx, d), "CreateWebhookDelivery")
		}
		wantPendingHead(t, s, pending...)
		for _, limit := range []int{1, 3} {
			wantEqual(t, fmt.Sprintf("DueWebhookDeliveries(%d)", limit), pendingDeliveries(t, s, limit), pending[:limit])
		}
		for _, limit := range []int{0, -1, store.MaxLimit + 1} {
			got := pendingDeliveries(t, s, limit)
			if len(got) < len(pending) {
				t.Fatalf("DueWebhookDeliveries(%d): %d deliveries, want at least %d", limit, len(got), len(pending))
			}
			wantEqual(t, fmt.Sprintf("head of DueWebhookDeliveries(%d)", limit), got[:len(pending)], pending)
		}
		for _, d := range made {
			if d.Status != kiln.DeliveryPending {
				wantNotPending(t, s, d)
			}
		}

		// A retry stays pending (whole, updated); success and failure leave the queue.
		a, b := pending[0], pending[1]
		a.Attempts, a.ResponseStatus, a.Error, a.UpdatedAt = 1, 502, "HTTP 502", now()
		wantOK(t, s.UpdateWebhookDelivery(ctx, a), "UpdateWebhookDelivery (retry)")
		wantPendingHead(t, s, pending...)
		a.Status, a.Attempts, a.ResponseStatus, a.Error = kiln.DeliverySucceeded, 2, 200, ""
		wantOK(t, s.UpdateWebhookDelivery(ctx, a), "UpdateWebhookDelivery (succeeded)")
		b.Status, b.Attempts, b.ResponseStatus, b.Error = kiln.DeliveryFailed, 5, 410, "HTTP 410"
		wantOK(t, s.UpdateWebhookDelivery(ctx, b), "UpdateWebhookDelivery (failed)")
		wantNotPending(t, s, a)
		wantNotPending(t, s, b)
		wantPendingHead(t, s, pending[2:]...)
		// Back to pending (a redelivery) queues it again, in its place.
		b.Status, b.Error = kiln.DeliveryPending, ""
		wantOK(t, s.UpdateWebhookDelivery(ctx, b), "UpdateWebhookDelivery (redeliver)")
		wantPendingHead(t, s, append([]*kiln.WebhookDelivery{b}, pending[2:]...)...)
	})

	t.Run("DeleteWebhookRemovesDeliveries", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		w, keep := createWebhook(t, s, f.org.ID), createWebhook(t, s, f.org.ID)
		m := newDeliveryMaker(t, s, time.Date(2007, 1, 1, 0, 0, 0, 0, time.UTC))
		// More deliveries than one DynamoDB transaction holds.
		var gone []*kiln.WebhookDelivery
		for i := range store.MaxLimit + 5 {
			st := kiln.DeliverySucceeded
			if i%10 == 0 {
				st = kiln.DeliveryPending
			}
			gone = append(gone, m.create(w, st))
		}
		kept := m.create(keep, kiln.DeliveryPending)
		wantPendingHead(t, s, gone[0])

		wantOK(t, s.DeleteWebhook(ctx, f.org.ID, w.ID), "DeleteWebhook")
		_, err := s.GetWebhook(ctx, f.org.ID, w.ID)
		wantCode(t, err, kiln.ENotFound, "GetWebhook after delete")
		for _, d := range gone {
			_, err := s.GetWebhookDelivery(ctx, f.org.ID, w.ID, d.ID)
			wantCode(t, err, kiln.ENotFound, "GetWebhookDelivery of a deleted webhook's delivery")
		}
		ds, next, err := s.ListWebhookDeliveries(ctx, f.org.ID, w.ID, store.Page{})
		wantOK(t, err, "ListWebhookDeliveries of a deleted webhook")
		if len(ds) != 0 || next != "" {
			t.Fatalf("deleted webhook lists %d deliveries, next %q", len(ds), next)
		}
		for _, d := range gone {
			if d.Status == kiln.DeliveryPending {
				wantNotPending(t, s, d)
			}
		}
		wantCode(t, s.CreateWebhookDelivery(ctx, m.next(w, kiln.DeliveryPending)), kiln.ENotFound,
			"CreateWebhookDelivery of a deleted webhook")

		got, err := s.GetWebhookDelivery(ctx, f.org.ID, keep.ID, kept.ID)
		wantOK(t, err, "GetWebhookDelivery of the other webhook")
		wantEqual(t, "the other webhook's delivery", got, kept)
		wantPendingHead(t, s, kept)
	})
}
