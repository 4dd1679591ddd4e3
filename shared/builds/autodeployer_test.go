package builds

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/delivery"
	"github.com/kilnbuild/kiln/shared/delivery/deliverytest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// A failed attempt's retry is a time stored on the build, not a wait: AttemptOne returns at once,
// the build is not attempted before that time (no request reaches the receiver), and at that time
// it is.
func TestDeliveryRetryIsScheduledNotSlept(t *testing.T) {
	for _, tt := range []struct {
		name             string
		answer           func(w http.ResponseWriter)
		wantMin, wantMax time.Duration
	}{
		{"503 with Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		}, 120 * time.Second, 120 * time.Second},
		{"Retry-After beyond the cap", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "100000")
			w.WriteHeader(http.StatusTooManyRequests)
		}, delivery.MaxWait, delivery.MaxWait},
		{"500: the backoff, ±20%", func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) },
			8 * time.Second, 12 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newDeliveryWorld(t)
			var calls atomic.Int32
			var fail atomic.Bool
			fail.Store(true)
			recv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				if fail.Load() {
					tt.answer(rw)
					return
				}
				rw.WriteHeader(http.StatusOK)
			}))
			defer recv.Close()
			b := w.build(t, w.org(t, recv.URL))
			d := w.deliverer()
			ctx := t.Context()
			start := w.clock()

			if err := d.AttemptOne(ctx, b.OrganizationID, b.ID); err != nil {
				t.Fatal(err)
			}
			got := w.get(t, b)
			wait := got.AutoDeployNextAt.Sub(start)
			if calls.Load() != 1 || got.AutoDeployStatus != kiln.AutoDeployDelivering || got.AutoDeployAttempts != 1 ||
				wait < tt.wantMin || wait > tt.wantMax {
				t.Fatalf("after a failed attempt: %d calls, %s, %d attempts, next attempt in %v; want 1 call, delivering, 1 attempt, next in [%v, %v]",
					calls.Load(), got.AutoDeployStatus, got.AutoDeployAttempts, wait, tt.wantMin, tt.wantMax)
			}
			due, err := w.st.DueBuildDeliveries(ctx, w.clock(), 10, 10)
			if err != nil || len(due) != 0 {
				t.Fatalf("due before its time: %v, %v", due, err)
			}
			// Not due yet: nothing is sent.
			w.advance(wait - time.Millisecond)
			if err := d.AttemptOne(ctx, b.OrganizationID, b.ID); err != nil || calls.Load() != 1 {
				t.Fatalf("attempt before the due time: %v, %d calls", err, calls.Load())
			}
			// Due: sent, and it succeeds.
			fail.Store(false)
			w.advance(time.Millisecond)
			if err := d.AttemptOne(ctx, b.OrganizationID, b.ID); err != nil {
				t.Fatal(err)
			}
			got = w.get(t, b)
			if calls.Load() != 2 || got.AutoDeployStatus != kiln.AutoDeploySucceeded || got.AutoDeployAttempts != 2 || !got.AutoDeployNextAt.IsZero() {
				t.Fatalf("at the due time: %d calls, %+v", calls.Load(), got)
			}
		})
	}
}

// The last attempt that fails ends the delivery: failed, with a neutral error, out of the queue.
func TestDeliveryFailsAfterTheLastAttempt(t *testing.T) {
	w := newDeliveryWorld(t)
	recv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(http.StatusBadGateway) }))
	defer recv.Close()
	b := w.build(t, w.org(t, recv.URL))
	d := w.deliverer()
	d.Attempts = 2
	for range 2 {
		if err := d.AttemptOne(t.Context(), b.OrganizationID, b.ID); err != nil {
			t.Fatal(err)
		}
		w.advance(time.Hour)
	}
	got := w.get(t, b)
	if got.AutoDeployStatus != kiln.AutoDeployFailed || got.AutoDeployError != "receiver answered 502" || got.AutoDeployAttempts != 2 {
		t.Fatalf("after the last attempt: %+v", got)
	}
}

// TestDeliveryCutOffEveryTimeEnds: an attempt that never recorded its end (a Lambda cut off at
// its time limit while streaming a large artifact to a slow receiver) still counted; once the
// last one was claimed and its lease ran out, the delivery fails instead of being claimed again
// forever.
func TestDeliveryCutOffEveryTimeEnds(t *testing.T) {
	w := newDeliveryWorld(t)
	var requests atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	defer recv.Close()
	b := w.build(t, w.org(t, recv.URL))
	d := w.deliverer()
	d.Attempts = 2
	// As the store holds it after two attempts whose processes died: claimed, lease over.
	cut := w.get(t, b)
	cut.AutoDeployStatus, cut.AutoDeployAttempts, cut.AutoDeployNextAt = kiln.AutoDeployDelivering, 2, w.clock().Add(-time.Second)
	if err := w.st.RecordBuildDelivery(t.Context(), cut, b.AutoDeployNextAt); err != nil {
		t.Fatal(err)
	}
	if err := d.AttemptOne(t.Context(), b.OrganizationID, b.ID); err != nil {
		t.Fatal(err)
	}
	got := w.get(t, b)
	if got.AutoDeployStatus != kiln.AutoDeployFailed || got.AutoDeployError != ReasonDeliveryCutOff || got.AutoDeployAttempts != 2 || requests.Load() != 0 {
		t.Fatalf("after two cut-off attempts: %s %q, %d attempts, %d requests", got.AutoDeployStatus, got.AutoDeployError, got.AutoDeployAttempts, requests.Load())
	}
	// One cut-off attempt of two: the second is made.
	other := w.build(t, w.org(t, recv.URL))
	cut = w.get(t, other)
	cut.AutoDeployStatus, cut.AutoDeployAttempts, cut.AutoDeployNextAt = kiln.AutoDeployDelivering, 1, w.clock().Add(-time.Second)
	if err := w.st.RecordBuildDelivery(t.Context(), cut, other.AutoDeployNextAt); err != nil {
		t.Fatal(err)
	}
	if err := d.AttemptOne(t.Context(), other.OrganizationID, other.ID); err != nil {
		t.Fatal(err)
	}
	if got := w.get(t, other); got.AutoDeployStatus != kiln.AutoDeploySucceeded || got.AutoDeployAttempts != 2 || requests.Load() != 1 {
		t.Fatalf("after one cut-off attempt: %s, %d attempts, %d requests", got.AutoDeployStatus, got.AutoDeployAttempts, requests.Load())
	}
}

// A process that died during an attempt left the build claimed until its lease ends; another
// process (a restart) leaves it alone until then, and delivers it after. A service that stops
// mid-attempt puts it back due at once.
func TestDeliveryResumesAfterRestart(t *testing.T) {
	w := newDeliveryWorld(t)
	var calls atomic.Int32
	release := make(chan struct{})
	recv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // the first attempt hangs until the service stops
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		rw.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()
	defer close(release)
	b := w.build(t, w.org(t, recv.URL))

	// A crash: the attempt was claimed, its outcome never recorded.
	claimed := w.get(t, b)
	claimed.AutoDeployStatus, claimed.AutoDeployAttempts = kiln.AutoDeployDelivering, 1
	claimed.AutoDeployNextAt = w.clock().Add(time.Minute)
	if err := w.st.RecordBuildDelivery(t.Context(), claimed, time.Time{}); err != nil {
		t.Fatal(err)
	}
	d := w.deliverer()
	if err := d.AttemptOne(t.Context(), b.OrganizationID, b.ID); err != nil || calls.Load() != 0 {
		t.Fatalf("attempt during the lease: %v, %d calls", err, calls.Load())
	}
	w.advance(time.Minute)
	// The service stops during the retried attempt: the build is due again at once.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- d.AttemptOne(ctx, b.OrganizationID, b.ID) }()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := w.get(t, b)
	if got.AutoDeployStatus != kiln.AutoDeployDelivering || !got.AutoDeployNextAt.IsZero() || got.AutoDeployAttempts != 2 {
		t.Fatalf("after a stop mid-attempt: %+v; want delivering, due now, 2 attempts", got)
	}
	// The restarted service delivers it.
	if err := w.deliverer().AttemptOne(t.Context(), b.OrganizationID, b.ID); err != nil {
		t.Fatal(err)
	}
	if got := w.get(t, b); got.AutoDeployStatus != kiln.AutoDeploySucceeded || calls.Load() != 2 {
		t.Fatalf("after the restart: %+v, %d calls", got, calls.Load())
	}
}

// Organization a's receiver hangs; organization b's deliveries, queued after a's, all complete
// while a's are still hanging, and a never holds more than deploy.PerOrganization workers.
func TestDeliveryOrganizationsTakeTurns(t *testing.T) {
	w := newDeliveryWorld(t)
	hang := deliverytest.NewHangingReceiver(t)
	var okCalls atomic.Int32
	fine := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		okCalls.Add(1)
		rw.WriteHeader(http.StatusNoContent)
	}))
	defer fine.Close()
	setA, setB := w.org(t, hang.URL), w.org(t, fine.URL)
	var as, bs []*kiln.Build
	for range 5 {
		as = append(as, w.build(t, setA))
	}
	for range 4 {
		bs = append(bs, w.build(t, setB))
	}
	d := w.deliverer()
	d.Workers = 3
	deliverytest.RunUntilEnd(t, d.Run)

	deliverytest.WaitAll(t, bs, "b's deliveries done while a's receiver hangs", func(b *kiln.Build) bool {
		return w.get(t, b).AutoDeployStatus == kiln.AutoDeploySucceeded
	})
	hang.WantHolding(t, delivery.PerOrganization) // a's receiver
	for _, a := range as {
		if got := w.get(t, a); got.AutoDeployStatus == kiln.AutoDeploySucceeded {
			t.Fatalf("a's build %s delivered to a receiver that hangs", a.ID)
		}
	}
}

// Past MaxQueuedDeliveries builds waiting, a redelivery is rate_limited and queues nothing.
func TestRedeliverIsCapped(t *testing.T) {
	w := newDeliveryWorld(t)
	set := w.org(t, "http://127.0.0.1:9/")
	for range MaxQueuedDeliveries {
		w.build(t, set)
	}
	done := w.build(t, set)
	done.AutoDeployStatus = kiln.AutoDeploySucceeded
	if err := w.st.UpdateBuild(t.Context(), done, kiln.StatusComplete, kiln.AllBuildFields); err != nil {
		t.Fatal(err)
	}
	d := w.deliverer()
	_, err := d.Redeliver(t.Context(), set.OrganizationID, done.ID)
	if !kiln.IsCode(err, kiln.ERateLimited) {
		t.Fatalf("Redeliver past the cap: %v, want rate_limited", err)
	}
	if got := w.get(t, done); got.AutoDeployStatus != kiln.AutoDeploySucceeded {
		t.Fatalf("a refused redelivery queued the build: %s", got.AutoDeployStatus)
	}
	// Another organization is not capped by this one's queue.
	other := w.org(t, "http://127.0.0.1:9/")
	ob := w.build(t, other)
	ob.AutoDeployStatus = kiln.AutoDeployFailed
	if err := w.st.UpdateBuild(t.Context(), ob, kiln.StatusComplete, kiln.AllBuildFields); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Redeliver(t.Context(), other.OrganizationID, ob.ID); err != nil || got.AutoDeployStatus != kiln.AutoDeployPending {
		t.Fatalf("Redeliver of another organization: %v, %v", got, err)
	}
}
