package delivery

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// An organization has at most 20 webhooks: the 21st is 409 invalid_state naming the cap, and
// creates nothing; deleting one makes room; another organization is not counted against it.
func TestWebhooksPerOrganizationAreCapped(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, t.TempDir()))
	orgID := e2e.OrgOf(t, ts)
	base := "/organizations/" + orgID + "/webhooks"
	hook := func(i int) map[string]any {
		return map[string]any{"url": fmt.Sprintf("https://hooks.example/%d", i), "events": []string{"build.complete"}}
	}
	var first string
	for i := range 20 {
		r := ts.Do(t, "POST", base, ts.Token, hook(i))
		if r.Status != http.StatusCreated {
			t.Fatalf("webhook %d: %d %s", i+1, r.Status, r.Raw)
		}
		if i == 0 {
			first = e2e.Field(t, r.Body, "id")
		}
	}
	r := ts.Do(t, "POST", base, ts.Token, hook(20))
	e2e.WantError(t, r, http.StatusConflict, "invalid_state")
	if msg := e2e.Field(t, r.Body, "message"); !strings.Contains(msg, "20 webhooks") {
		t.Errorf("message %q does not name the cap", msg)
	}
	list := e2e.Items(t, ts.Do(t, "GET", base, ts.Token, nil))
	if len(list) != 20 {
		t.Fatalf("after a refused 21st: %d webhooks, want 20", len(list))
	}
	for _, h := range list {
		if h["url"] == "https://hooks.example/20" {
			t.Fatalf("the refused webhook was created: %v", h)
		}
	}
	// Another organization has its own 20.
	other := e2e.BootstrapOrg(t, ts, "Other")
	if r := ts.Do(t, "POST", "/organizations/"+other.OrgID+"/webhooks", other.Token, hook(0)); r.Status != http.StatusCreated {
		t.Fatalf("another organization's first webhook: %d %s", r.Status, r.Raw)
	}
	// Deleting one makes room for one.
	if r := ts.Do(t, "DELETE", base+"/"+first, ts.Token, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	if r := ts.Do(t, "POST", base, ts.Token, hook(21)); r.Status != http.StatusCreated {
		t.Fatalf("after a delete: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, ts.Do(t, "POST", base, ts.Token, hook(22)), http.StatusConflict, "invalid_state")
}

// While 50 of the organization's webhook deliveries are pending, a redelivery is 429
// rate_limited with Retry-After and queues nothing; with 49 it is queued and sent.
func TestWebhookRedeliveryIsCapped(t *testing.T) {
	t.Parallel()
	cfg := e2e.NewConfig(t, t.TempDir())
	e2e.LoopbackAllowed(&cfg)
	ts := e2e.StartService(t, e2e.Serve, cfg)
	orgID := e2e.OrgOf(t, ts)
	hr := e2e.NewHookReceiver(t)
	base := "/organizations/" + orgID + "/webhooks"
	created := ts.Do(t, "POST", base, ts.Token, map[string]any{"url": hr.URL, "events": []string{"build.complete"}})
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	hr.Mu.Lock()
	hr.Secret = e2e.Field(t, created.Body, "secret")
	hr.Mu.Unlock()
	hookID := e2e.Field(t, created.Body, "id")

	// A delivery that ended, and 50 pending ones due in an hour (the sender leaves them alone).
	st, ctx, now := ts.Service.Store(), context.Background(), time.Now().UTC().Truncate(time.Millisecond)
	mk := func(status kiln.DeliveryStatus, next time.Time) *kiln.WebhookDelivery {
		d := &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: orgID, WebhookID: hookID, Event: kiln.EventBuildComplete,
			Payload: []byte(`{"type":"build.complete"}`), Status: status, NextAttemptAt: next, CreatedAt: now, UpdatedAt: now}
		if err := st.CreateWebhookDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	ended := mk(kiln.DeliveryFailed, time.Time{})
	var pending []*kiln.WebhookDelivery
	for range 50 {
		pending = append(pending, mk(kiln.DeliveryPending, now.Add(time.Hour)))
	}
	deliveries := func() int {
		t.Helper()
		return len(e2e.Items(t, ts.Do(t, "GET", base+"/"+hookID+"/deliveries?limit=100", ts.Token, nil)))
	}
	if n := deliveries(); n != 51 {
		t.Fatalf("%d deliveries before, want 51", n)
	}

	redeliver := base + "/" + hookID + "/deliveries/" + ended.ID + "/redeliver"
	r := ts.Do(t, "POST", redeliver, ts.Token, nil)
	e2e.WantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if r.Header.Get("Retry-After") != "60" || !strings.Contains(e2e.Field(t, r.Body, "message"), "50") {
		t.Errorf("Retry-After %q, message %q; want 60 and the cap named", r.Header.Get("Retry-After"), e2e.Field(t, r.Body, "message"))
	}
	if n := deliveries(); n != 51 {
		t.Fatalf("a refused redelivery queued something: %d deliveries, want 51", n)
	}

	// One pending delivery ends: 49 pending, the redelivery is queued and sent.
	gone := *pending[0]
	gone.Status, gone.NextAttemptAt, gone.Error = kiln.DeliveryFailed, time.Time{}, "receiver answered 500"
	if err := st.RecordWebhookDelivery(ctx, &gone, pending[0].NextAttemptAt); err != nil {
		t.Fatal(err)
	}
	r = ts.Do(t, "POST", redeliver, ts.Token, nil)
	if r.Status != http.StatusAccepted || e2e.Field(t, r.Body, "status") != "pending" {
		t.Fatalf("redeliver below the cap: %d %s", r.Status, r.Raw)
	}
	for deadline := time.Now().Add(30 * time.Second); len(hr.Events()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) { // a hang guard, not a speed goal
			t.Fatal("the redelivery was never sent")
		}
	}
	if got := hr.Events(); len(got) != 1 || got[0]["_delivery"] != e2e.Field(t, r.Body, "id") || hr.Bad != 0 {
		t.Fatalf("received %v (%d badly signed)", got, hr.Bad)
	}
}

// While 20 of the organization's builds wait for delivery, POST /builds/:id/deploy is 429
// rate_limited with Retry-After and queues nothing; with 19 it is queued.
func TestDeployRedeliveryIsCapped(t *testing.T) {
	t.Parallel()
	w, rc, id := e2e.DeliveredBuild(t)
	// 20 complete builds of the organization whose delivery attempt is under way (leased for an
	// hour, so the sender leaves them alone).
	st, ctx := w.Service.Store(), context.Background()
	done, err := st.GetBuild(ctx, w.OrgID, id)
	if err != nil {
		t.Fatal(err)
	}
	next := time.Now().UTC().Truncate(time.Millisecond).Add(time.Hour)
	var queued []*kiln.Build
	for range 20 {
		b := *done
		b.ID, b.AutoDeployStatus, b.AutoDeployAttempts, b.AutoDeployNextAt = kiln.NewID(), kiln.AutoDeployDelivering, 1, next
		if err := st.CreateBuild(ctx, &b); err != nil {
			t.Fatal(err)
		}
		queued = append(queued, &b)
	}

	r := w.Do(t, "POST", "/builds/"+id+"/deploy", w.Token, nil)
	e2e.WantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if r.Header.Get("Retry-After") != "60" || !strings.Contains(e2e.Field(t, r.Body, "message"), "20") {
		t.Errorf("Retry-After %q, message %q; want 60 and the cap named", r.Header.Get("Retry-After"), e2e.Field(t, r.Body, "message"))
	}
	if b := w.Do(t, "GET", "/builds/"+id, w.Token, nil); b.Body["autoDeployStatus"] != "succeeded" || b.Body["autoDeployAttempts"] != float64(1) {
		t.Fatalf("a refused redelivery changed the build: %s", b.Raw)
	}
	if n := len(rc.Got()); n != 1 {
		t.Fatalf("receiver got %d requests, want the first delivery only", n)
	}

	// One of them ends: 19 waiting, the redelivery is queued.
	end := *queued[0]
	end.AutoDeployStatus, end.AutoDeployNextAt, end.AutoDeployError = kiln.AutoDeployFailed, time.Time{}, "receiver answered 500"
	if err := st.RecordBuildDelivery(ctx, &end, next); err != nil {
		t.Fatal(err)
	}
	r = w.Do(t, "POST", "/builds/"+id+"/deploy", w.Token, nil)
	if r.Status != http.StatusAccepted || e2e.Field(t, r.Body, "autoDeployStatus") != "pending" {
		t.Fatalf("deploy below the cap: %d %s", r.Status, r.Raw)
	}
	if b := w.WaitDeploy(t, id); b["autoDeployStatus"] != "succeeded" || len(rc.Got()) != 2 {
		t.Fatalf("after the redelivery: %v, %d requests", b, len(rc.Got()))
	}
}
