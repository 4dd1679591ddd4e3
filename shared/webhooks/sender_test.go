package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/delivery"
	"github.com/kilnbuild/kiln/shared/delivery/deliverytest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// verify is what a customer's receiver does with X-Kiln-Signature: the HMAC-SHA256 of the raw
// body with the webhook's secret, compared in constant time.
func verify(secret string, body []byte, header string) bool {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal([]byte(header), []byte("sha256="+hex.EncodeToString(m.Sum(nil))))
}

func TestSign(t *testing.T) {
	for _, tt := range []struct {
		secret, body, want string
	}{
		// RFC 4231, test case 2.
		{"Jefe", "what do ya want for nothing?", "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		// The empty body (HMAC-SHA256 with an empty key is still keyed).
		{"", "", "sha256=b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"},
	} {
		if got := Sign([]byte(tt.secret), []byte(tt.body)); got != tt.want {
			t.Errorf("Sign(%q, %q) = %s, want %s", tt.secret, tt.body, got, tt.want)
		}
	}
}

// captured is one request a receiver got.
type captured struct {
	path   string
	header http.Header
	body   []byte
}

// recorder is a receiver that records its requests and answers with answer.
type recorder struct {
	*httptest.Server
	mu     sync.Mutex
	got    []captured
	answer func(w http.ResponseWriter)
}

func newRecorder(t testing.TB, answer func(w http.ResponseWriter)) *recorder {
	rc := &recorder{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, captured{path: r.URL.Path, header: r.Header.Clone(), body: body})
		answer := rc.answer
		rc.mu.Unlock()
		answer(w)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *recorder) requests() []captured {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]captured(nil), rc.got...)
}

func (rc *recorder) setAnswer(answer func(w http.ResponseWriter)) {
	rc.mu.Lock()
	rc.answer = answer
	rc.mu.Unlock()
}

func status(code int) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { w.WriteHeader(code) }
}

// A 2xx ends the delivery as succeeded; the request carries the exact payload, the event and
// delivery headers, and a signature the receiver verifies with the webhook's secret (and that a
// different secret does not verify).
func TestAttemptSendsASignedDeliveryAndRecordsSuccess(t *testing.T) {
	w := newHookWorld(t)
	rc := newRecorder(t, status(http.StatusNoContent))
	const secret = "whsec_receiver-knows-this"
	h := w.hook(t, w.org(t), rc.URL+"/hooks", secret)
	payload := `{"type":"build.complete","data":{"build":{"id":"b1"}}}`
	del := w.delivery(t, h, payload)

	if err := w.dispatcher().AttemptOne(t.Context(), h.OrganizationID, h.ID, del.ID); err != nil {
		t.Fatal(err)
	}
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if string(r.body) != payload {
		t.Errorf("body %q, want the payload %q", r.body, payload)
	}
	sig := r.header.Get("X-Kiln-Signature")
	if !verify(secret, r.body, sig) {
		t.Errorf("X-Kiln-Signature %q does not verify with the webhook's secret", sig)
	}
	if verify("whsec_someone-else", r.body, sig) {
		t.Errorf("X-Kiln-Signature %q verifies with another secret", sig)
	}
	if r.header.Get("X-Kiln-Event") != "build.complete" || r.header.Get("X-Kiln-Delivery") != del.ID ||
		r.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", r.header)
	}
	got := w.get(t, del)
	if got.Status != kiln.DeliverySucceeded || got.Attempts != 1 || got.ResponseStatus != http.StatusNoContent ||
		got.Error != "" || !got.NextAttemptAt.IsZero() {
		t.Fatalf("after a 204: %+v; want succeeded, 1 attempt, response 204, no error, not due", got)
	}
	// Done: another attempt sends nothing.
	if err := w.dispatcher().AttemptOne(t.Context(), h.OrganizationID, h.ID, del.ID); err != nil || len(rc.requests()) != 1 {
		t.Fatalf("attempt of a succeeded delivery: %v, %d requests", err, len(rc.requests()))
	}
}

// A failed attempt's retry is a time stored on the delivery, not a wait: AttemptOne returns at
// once, nothing is sent before that time, and at that time the delivery is sent again.
func TestAttemptRetryIsScheduledNotSlept(t *testing.T) {
	for _, tt := range []struct {
		name             string
		answer           func(w http.ResponseWriter)
		code             int
		wantMin, wantMax time.Duration
	}{
		{"503 with Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		}, 503, 120 * time.Second, 120 * time.Second},
		{"429 with Retry-After beyond the cap", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "100000")
			w.WriteHeader(http.StatusTooManyRequests)
		}, 429, delivery.MaxWait, delivery.MaxWait},
		{"500: the backoff, ±20%", status(http.StatusInternalServerError), 500, 8 * time.Second, 12 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newHookWorld(t)
			rc := newRecorder(t, tt.answer)
			h := w.hook(t, w.org(t), rc.URL, "s")
			del := w.delivery(t, h, `{"n":1}`)
			d := w.dispatcher()
			ctx := t.Context()
			start := w.clock()

			if err := d.AttemptOne(ctx, h.OrganizationID, h.ID, del.ID); err != nil {
				t.Fatal(err)
			}
			got := w.get(t, del)
			wait := got.NextAttemptAt.Sub(start)
			if n := len(rc.requests()); n != 1 || got.Status != kiln.DeliveryPending || got.Attempts != 1 ||
				got.ResponseStatus != tt.code || wait < tt.wantMin || wait > tt.wantMax {
				t.Fatalf("after a failed attempt: %d requests, %+v, next attempt in %v; want 1 request, pending, 1 attempt, response %d, next in [%v, %v]",
					n, got, wait, tt.code, tt.wantMin, tt.wantMax)
			}
			if due, err := w.st.DueWebhookDeliveries(ctx, w.clock(), 10, 10); err != nil || len(due) != 0 {
				t.Fatalf("due before its time: %v, %v", due, err)
			}
			// Not due yet: nothing is sent.
			w.advance(wait - time.Millisecond)
			if err := d.AttemptOne(ctx, h.OrganizationID, h.ID, del.ID); err != nil || len(rc.requests()) != 1 {
				t.Fatalf("attempt before the due time: %v, %d requests", err, len(rc.requests()))
			}
			// Due: sent again, and it succeeds.
			rc.setAnswer(status(http.StatusOK))
			w.advance(time.Millisecond)
			if due, err := w.st.DueWebhookDeliveries(ctx, w.clock(), 10, 10); err != nil || len(due) != 1 || due[0].ID != del.ID {
				t.Fatalf("not due at its time: %v, %v", due, err)
			}
			if err := d.AttemptOne(ctx, h.OrganizationID, h.ID, del.ID); err != nil {
				t.Fatal(err)
			}
			got = w.get(t, del)
			reqs := rc.requests()
			if len(reqs) != 2 || got.Status != kiln.DeliverySucceeded || got.Attempts != 2 || !got.NextAttemptAt.IsZero() {
				t.Fatalf("at the due time: %d requests, %+v", len(reqs), got)
			}
			if reqs[0].header.Get("X-Kiln-Delivery") != reqs[1].header.Get("X-Kiln-Delivery") {
				t.Errorf("a retry carries another delivery id: %v, %v", reqs[0].header, reqs[1].header)
			}
		})
	}
}

// A delivery ends failed, out of the queue, after its last attempt or at once when the answer is
// not worth retrying; a redirect is such an answer and is never followed.
func TestAttemptFailures(t *testing.T) {
	var targetHits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer target.Close()
	for _, tt := range []struct {
		name         string
		answer       func(w http.ResponseWriter)
		attempts     int // the dispatcher's Attempts
		wantAttempts int
		wantCode     int
		wantError    string
	}{
		{"502 until the last attempt", status(http.StatusBadGateway), 3, 3, 502, "receiver answered 502"},
		{"404 is not retried", status(http.StatusNotFound), 3, 1, 404, "receiver answered 404"},
		{"a redirect is not followed", func(w http.ResponseWriter) {
			w.Header().Set("Location", target.URL+"/elsewhere")
			w.WriteHeader(http.StatusFound)
		}, 3, 1, 302, "redirect (302) not followed"},
		{"a permanent redirect neither", func(w http.ResponseWriter) {
			w.Header().Set("Location", target.URL+"/elsewhere")
			w.WriteHeader(http.StatusPermanentRedirect)
		}, 3, 1, 308, "redirect (308) not followed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newHookWorld(t)
			rc := newRecorder(t, tt.answer)
			h := w.hook(t, w.org(t), rc.URL, "s")
			del := w.delivery(t, h, `{}`)
			d := w.dispatcher()
			d.Attempts = tt.attempts
			for range tt.attempts + 1 { // one more than allowed: it must not be sent
				if err := d.AttemptOne(t.Context(), h.OrganizationID, h.ID, del.ID); err != nil {
					t.Fatal(err)
				}
				w.advance(delivery.MaxWait)
			}
			got := w.get(t, del)
			if got.Status != kiln.DeliveryFailed || got.Attempts != tt.wantAttempts || got.ResponseStatus != tt.wantCode ||
				got.Error != tt.wantError || !got.NextAttemptAt.IsZero() {
				t.Fatalf("at the end: %+v; want failed after %d attempts, response %d, error %q", got, tt.wantAttempts, tt.wantCode, tt.wantError)
			}
			if n := len(rc.requests()); n != tt.wantAttempts {
				t.Fatalf("receiver got %d requests, want %d", n, tt.wantAttempts)
			}
			if due, err := w.st.DueWebhookDeliveries(t.Context(), w.clock(), 10, 10); err != nil || len(due) != 0 {
				t.Fatalf("a failed delivery is still queued: %v, %v", due, err)
			}
		})
	}
	if n := targetHits.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}

// A process that died during an attempt left the delivery claimed until its lease ends; another
// process on the same store file (a restart) leaves it alone until then, and sends it after; so
// does a second worker while an attempt runs. A dispatcher that stops mid-attempt puts it back
// due at once, and the next one sends it.
func TestAttemptResumesAfterRestart(t *testing.T) {
	w := newHookWorld(t)
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	var calls atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read: the server then notices the client leaving
		n := calls.Add(1)
		arrived <- struct{}{}
		if n == 1 { // the first request hangs until the dispatcher stops
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		rw.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()
	defer close(release)
	h := w.hook(t, w.org(t), recv.URL, "s")
	del := w.delivery(t, h, `{}`)

	// A crash: the attempt was claimed, its outcome never recorded.
	claimed := w.get(t, del)
	claimed.Attempts, claimed.NextAttemptAt = 1, w.clock().Add(time.Minute)
	if err := w.st.RecordWebhookDelivery(t.Context(), claimed, time.Time{}); err != nil {
		t.Fatal(err)
	}
	w.reopen(t)
	if err := w.dispatcher().AttemptOne(t.Context(), h.OrganizationID, h.ID, del.ID); err != nil || calls.Load() != 0 {
		t.Fatalf("attempt during the lease: %v, %d requests", err, calls.Load())
	}
	w.advance(time.Minute)

	// The dispatcher stops during the retried attempt: the delivery is due again at once.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- w.dispatcher().AttemptOne(ctx, h.OrganizationID, h.ID, del.ID) }()
	<-arrived
	// Meanwhile another worker, listed the same delivery, leaves the claimed attempt alone.
	if err := w.dispatcher().AttemptOne(t.Context(), h.OrganizationID, h.ID, del.ID); err != nil || calls.Load() != 1 {
		t.Fatalf("a second worker during an attempt: %v, %d requests", err, calls.Load())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := w.get(t, del)
	if got.Status != kiln.DeliveryPending || !got.NextAttemptAt.IsZero() || got.Attempts != 2 {
		t.Fatalf("after a stop mid-attempt: %+v; want pending, due now, 2 attempts", got)
	}

	// The restarted service's scheduler finds it in the store and sends it.
	w.reopen(t)
	d := w.dispatcher()
	runCtx, stop := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() { d.Run(runCtx); close(stopped) }()
	defer func() { stop(); <-stopped }()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second): // a hang guard, not a speed goal
		t.Fatal("the restarted dispatcher never sent the delivery")
	}
	for deadline := time.Now().Add(30 * time.Second); w.get(t, del).Status == kiln.DeliveryPending; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the delivery's success was never recorded")
		}
	}
	if got := w.get(t, del); got.Status != kiln.DeliverySucceeded || got.Attempts != 3 || calls.Load() != 2 {
		t.Fatalf("after the restart: %+v, %d requests", got, calls.Load())
	}
}

// Organization a's receiver hangs; organization b's deliveries, recorded after a's, all succeed
// while a's still hang, and a never holds more than deploy.PerOrganization workers.
func TestOrganizationsTakeTurns(t *testing.T) {
	w := newHookWorld(t)
	hang := deliverytest.NewHangingReceiver(t)
	fine := newRecorder(t, status(http.StatusNoContent))
	hookA, hookB := w.hook(t, w.org(t), hang.URL, "a"), w.hook(t, w.org(t), fine.URL, "b")
	var as, bs []*kiln.WebhookDelivery
	for range 5 {
		as = append(as, w.delivery(t, hookA, `{"org":"a"}`))
	}
	w.advance(time.Millisecond) // b's are due after a's: oldest first alone would send a's first
	for range 4 {
		bs = append(bs, w.delivery(t, hookB, `{"org":"b"}`))
	}
	d := w.dispatcher()
	d.Workers = 3
	deliverytest.RunUntilEnd(t, d.Run)

	deliverytest.WaitAll(t, bs, "b's deliveries done while a's receiver hangs", func(b *kiln.WebhookDelivery) bool {
		return w.get(t, b).Status == kiln.DeliverySucceeded
	})
	hang.WantHolding(t, delivery.PerOrganization) // a's receiver
	for _, a := range as {
		if got := w.get(t, a); got.Status != kiln.DeliveryPending {
			t.Fatalf("a's delivery %s is %s, to a receiver that hangs", a.ID, got.Status)
		}
	}
}
