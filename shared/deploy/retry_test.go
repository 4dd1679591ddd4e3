package deploy

import (
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDeliverStatuses: 2xx succeeds; 3xx and 4xx other than 408 and 429 fail at once; 408, 429
// and 5xx are retried up to Attempts with doubling backoff.
func TestDeliverStatuses(t *testing.T) {
	tests := []struct {
		status   int
		ok       bool
		attempts int
		err      string
	}{
		{200, true, 1, ""},
		{201, true, 1, ""},
		{202, true, 1, ""},
		{204, true, 1, ""},
		{301, false, 1, "redirect (301) not followed"},
		{304, false, 1, "redirect (304) not followed"},
		{307, false, 1, "redirect (307) not followed"},
		{400, false, 1, "receiver answered 400"},
		{401, false, 1, "receiver answered 401"},
		{403, false, 1, "receiver answered 403"},
		{404, false, 1, "receiver answered 404"},
		{413, false, 1, "receiver answered 413"},
		{408, false, 3, "receiver answered 408"},
		{429, false, 3, "receiver answered 429"},
		{500, false, 3, "receiver answered 500"},
		{502, false, 3, "receiver answered 502"},
		{503, false, 3, "receiver answered 503"},
		{504, false, 3, "receiver answered 504"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			srv, hits := receiver(t, answer(tt.status))
			var opens atomic.Int32
			var s sleeps
			var seen []int
			res := Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta,
				Artifact: artifact(randomBytes(t, 64<<10), &opens), BuildID: "b123", Attempts: 3,
				Backoff: 100 * time.Millisecond, Sleep: s.sleep, OnAttempt: func(n int) { seen = append(seen, n) }})
			want := Result{Succeeded: tt.ok, Attempts: tt.attempts, Error: tt.err, Status: tt.status}
			if res != want {
				t.Errorf("result %+v, want %+v", res, want)
			}
			if int(hits.Load()) != tt.attempts || int(opens.Load()) != tt.attempts || len(seen) != tt.attempts {
				t.Errorf("%d requests, %d opens, OnAttempt %v; want %d each", hits.Load(), opens.Load(), seen, tt.attempts)
			}
			checkBackoff(t, s.all(), 100*time.Millisecond, tt.attempts-1)
		})
	}
}

// checkBackoff checks n waits of first, 2×first, 4×first… each within ±20%.
func checkBackoff(t *testing.T, waits []time.Duration, first time.Duration, n int) {
	t.Helper()
	if len(waits) != n {
		t.Fatalf("waits %v, want %d", waits, n)
	}
	for i, d := range waits {
		base := first << i
		if d < base*8/10 || d > base*12/10 {
			t.Errorf("wait %d is %v, want %v ±20%%", i+1, d, base)
		}
	}
}

func TestDeliverRetryThenSuccess(t *testing.T) {
	var n atomic.Int32
	var mu sync.Mutex
	var types []string
	var sums [][md5.Size]byte
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		got := parse(r)
		mu.Lock()
		types = append(types, got.contentType)
		if len(got.parts) == 2 {
			sums = append(sums, got.parts[1].md5)
		}
		mu.Unlock()
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	data := randomBytes(t, 1<<20)
	var s sleeps
	res := Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta, Artifact: artifact(data, nil),
		BuildID: "b123", Attempts: 5, Backoff: time.Second, Sleep: s.sleep})
	if want := (Result{Succeeded: true, Attempts: 2, Status: 204}); res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	checkBackoff(t, s.all(), time.Second, 1)
	if len(types) != 2 || types[0] != types[1] {
		t.Errorf("Content-Types %q: want the same boundary on both attempts", types)
	}
	if len(sums) != 2 || sums[0] != md5.Sum(data) || sums[1] != md5.Sum(data) {
		t.Errorf("artifact sums %x, want twice %x", sums, md5.Sum(data))
	}
}

func TestDeliverRetryAfter(t *testing.T) {
	var n atomic.Int32
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	var s sleeps
	res := Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta, Artifact: artifact([]byte("x"), nil),
		Attempts: 3, Backoff: 10 * time.Millisecond, Sleep: s.sleep})
	if want := (Result{Succeeded: true, Attempts: 2, Status: 204}); res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	if got := s.all(); !reflect.DeepEqual(got, []time.Duration{time.Second}) {
		t.Errorf("waits %v, want [1s]", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
	}{
		{"", -1},
		{"soon", -1},
		{"-5", -1},
		{"0", 0},
		{"1", time.Second},
		{" 120 ", 2 * time.Minute},
		{"300", MaxWait},
		{"86400", MaxWait},
		{"99999999999999999", MaxWait},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{now.Add(time.Hour).Format(http.TimeFormat), MaxWait},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"Sunday, 01-Mar-26 12:00:10 GMT", 10 * time.Second}, // RFC 850
	}
	for _, tt := range tests {
		if got := retryAfter(tt.v, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestBackoffDelayCapped(t *testing.T) {
	for n := 1; n < 80; n++ {
		if d := backoffDelay(2*time.Second, n); d <= 0 || d > MaxWait*12/10 {
			t.Fatalf("backoffDelay(2s, %d) = %v", n, d)
		}
	}
}

func TestTransferTimeout(t *testing.T) {
	if got := transferTimeout(0); got != time.Minute {
		t.Errorf("transferTimeout(0) = %v", got)
	}
	if got := transferTimeout(2 << 30); got != time.Minute+2048*time.Second {
		t.Errorf("transferTimeout(2 GiB) = %v", got)
	}
	if got := transferTimeout(1 << 50); got <= 0 {
		t.Errorf("transferTimeout(1 PiB) = %v", got)
	}
}
