// Package deliverytest holds receivers for the tests of kiln's outbound deliveries.
package deliverytest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// HangingReceiver blocks every request until the test ends (or the client gives up), counting
// those that hang at once and the most that ever did.
type HangingReceiver struct {
	*httptest.Server
	mu        sync.Mutex
	now, most int
	stop      chan struct{}
}

// NewHangingReceiver starts one, stopped when the test ends.
func NewHangingReceiver(t testing.TB) *HangingReceiver {
	h := &HangingReceiver{stop: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.now++
		h.most = max(h.most, h.now)
		h.mu.Unlock()
		defer func() { h.mu.Lock(); h.now--; h.mu.Unlock() }()
		select {
		case <-h.stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(h.stop); h.Close() })
	return h
}

// Hanging is how many requests hang now, and the most that ever did at once.
func (h *HangingReceiver) Hanging() (now, most int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now, h.most
}

// WantHolding waits until a request hangs (on a busy machine other receivers' deliveries may all
// end before this one's first connects), then fails the test if more than limit ever hung at once.
func (h *HangingReceiver) WantHolding(t testing.TB, limit int) {
	t.Helper()
	WaitDone(t, 1, "hanging receiver holds a request", func() int { n, _ := h.Hanging(); return min(n, 1) })
	if now, most := h.Hanging(); now < 1 || most > limit {
		t.Fatalf("hanging receiver: %d requests hanging, at most %d at once; want some, at most %d", now, most, limit)
	}
}

// WaitDone polls count every 5 ms until it reports all of want done, and fails the test after
// 30 s — a guard against a hang, not a speed goal — saying how many of what were done.
func WaitDone(t testing.TB, want int, what string, count func() int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		got := count()
		if got == want {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("%d of %d %s", got, want, what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
