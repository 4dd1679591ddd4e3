// Package deploytest holds receivers for the tests of kiln's outbound deliveries.
package deploytest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
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
