package delivery

import (
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDeliverStatuses: one attempt; 2xx succeeds; 3xx and 4xx other than 408 and 429 fail for
// good; 408, 429 and 5xx are worth another attempt.
func TestDeliverStatuses(t *testing.T) {
	tests := []struct {
		status int
		ok     bool
		retry  bool
		err    string
	}{
		{200, true, false, ""},
		{201, true, false, ""},
		{202, true, false, ""},
		{204, true, false, ""},
		{301, false, false, "redirect (301) not followed"},
		{304, false, false, "redirect (304) not followed"},
		{307, false, false, "redirect (307) not followed"},
		{400, false, false, "receiver answered 400"},
		{401, false, false, "receiver answered 401"},
		{403, false, false, "receiver answered 403"},
		{404, false, false, "receiver answered 404"},
		{413, false, false, "receiver answered 413"},
		{408, false, true, "receiver answered 408"},
		{429, false, true, "receiver answered 429"},
		{500, false, true, "receiver answered 500"},
		{502, false, true, "receiver answered 502"},
		{503, false, true, "receiver answered 503"},
		{504, false, true, "receiver answered 504"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			srv, hits := receiver(t, answer(tt.status))
			var opens atomic.Int32
			var causes []string
			res := Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta,
				Artifact: artifact(randomBytes(t, 64<<10), &opens), BuildID: "b123",
				OnFailure: func(cause string) { causes = append(causes, cause) }})
			want := Result{Succeeded: tt.ok, Error: tt.err, Status: tt.status, Retry: tt.retry, RetryAfter: -1}
			if tt.ok {
				want.RetryAfter = 0
			}
			if res != want {
				t.Errorf("result %+v, want %+v", res, want)
			}
			if hits.Load() != 1 || opens.Load() != 1 || len(causes) != map[bool]int{true: 0, false: 1}[tt.ok] {
				t.Errorf("%d requests, %d opens, causes %q; want one attempt", hits.Load(), opens.Load(), causes)
			}
		})
	}
}

// TestScheduleBacksOff: after a failed attempt worth another, the next is due after the backoff
// doubled for each attempt made (±20%), or after the receiver's Retry-After; none after the
// last attempt, a success or a failure for good.
func TestScheduleBacksOff(t *testing.T) {
	retry := Result{Retry: true, RetryAfter: -1}
	tests := []struct {
		name      string
		res       Result
		n         int
		wait      time.Duration // ±20% unless exact
		exact     bool
		wantAgain bool
	}{
		{"first retry", retry, 1, 100 * time.Millisecond, false, true},
		{"second retry doubles", retry, 2, 200 * time.Millisecond, false, true},
		{"third retry doubles again", retry, 3, 400 * time.Millisecond, false, true},
		{"the last attempt", retry, 4, 0, true, false},
		{"retry-after", Result{Retry: true, RetryAfter: time.Second}, 1, time.Second, true, true},
		{"retry-after capped", Result{Retry: true, RetryAfter: time.Hour}, 1, MaxWait, true, true},
		{"succeeded", Result{Succeeded: true}, 1, 0, true, false},
		{"failed for good", Result{RetryAfter: -1}, 1, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, again := Schedule(tt.res, tt.n, 4, 100*time.Millisecond)
			if again != tt.wantAgain {
				t.Fatalf("again %v, want %v", again, tt.wantAgain)
			}
			if tt.exact && wait != tt.wait || !tt.exact && (wait < tt.wait*8/10 || wait > tt.wait*12/10) {
				t.Errorf("wait %v, want %v (exact: %v)", wait, tt.wait, tt.exact)
			}
		})
	}
}

// TestDeliverAgainAfterAFailure: an attempt after a failed one sends the whole artifact again.
func TestDeliverAgainAfterAFailure(t *testing.T) {
	var n atomic.Int32
	var mu sync.Mutex
	var sums [][md5.Size]byte
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		got := parse(r)
		mu.Lock()
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
	d := Delivery{URL: srv.URL, Metadata: testMeta, Artifact: artifact(data, nil), BuildID: "b123"}
	if res, want := Deliver(context.Background(), client(), d), (Result{Error: "receiver answered 503", Status: 503, Retry: true, RetryAfter: -1}); res != want {
		t.Fatalf("first attempt %+v, want %+v", res, want)
	}
	if res, want := Deliver(context.Background(), client(), d), (Result{Succeeded: true, Status: 204}); res != want {
		t.Fatalf("second attempt %+v, want %+v", res, want)
	}
	if len(sums) != 2 || sums[0] != md5.Sum(data) || sums[1] != md5.Sum(data) {
		t.Errorf("artifact sums %x, want twice %x", sums, md5.Sum(data))
	}
}

func TestDeliverRetryAfter(t *testing.T) {
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	res := Deliver(context.Background(), client(), Delivery{URL: srv.URL, Metadata: testMeta, Artifact: artifact([]byte("x"), nil)})
	if want := (Result{Error: "receiver answered 429", Status: 429, Retry: true, RetryAfter: time.Second}); res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	if wait, again := Schedule(res, 1, 3, 10*time.Millisecond); !again || wait != time.Second {
		t.Errorf("next attempt after %v (%v), want after the receiver's 1s", wait, again)
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
