package delivery

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Schedule places the attempt after attempt n (from 1) of at most attempts, which ended in res:
// again is false when there is none (it succeeded, failed for good, or was the last); otherwise the
// next attempt is due after wait: the receiver's Retry-After when it sent one (capped at MaxWait),
// else backoff doubled n-1 times (capped at MaxWait) with ±20% jitter. A retry is scheduled in the
// store at now+wait, never slept on.
func Schedule(res Result, n, attempts int, backoff time.Duration) (wait time.Duration, again bool) {
	if attempts < 1 {
		attempts = DefaultAttempts
	}
	if backoff <= 0 {
		backoff = DefaultBackoff
	}
	if res.Succeeded || !res.Retry || n >= attempts {
		return 0, false
	}
	if res.RetryAfter >= 0 {
		return min(res.RetryAfter, MaxWait), true
	}
	return backoffDelay(backoff, n), true
}

// AttemptTimeout bounds one attempt carrying size bytes (TransferTimeout): a scheduler leases an
// attempt for this long plus a margin, after which a lost attempt is due again.
func AttemptTimeout(size int64) time.Duration { return transferTimeout(size) }

// backoffDelay is the wait after failed attempt n (from 1): backoff doubled n-1 times, capped at
// MaxWait, then ±20% jitter.
func backoffDelay(backoff time.Duration, n int) time.Duration {
	d := backoff
	for i := 1; i < n && d < MaxWait; i++ {
		d *= 2
	}
	d = min(d, MaxWait)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// retryAfter parses a Retry-After header, delay-seconds or an HTTP date, capped at MaxWait; -1
// when absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return -1
		}
		return min(time.Duration(min(secs, int64(MaxWait/time.Second)))*time.Second, MaxWait)
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return -1
	}
	return min(max(t.Sub(now), 0), MaxWait)
}

// transferTimeout bounds one attempt: a minute, plus a second per MiB of artifact (1 MiB/s is the
// slowest receiver link supported).
func transferTimeout(size int64) time.Duration {
	return time.Minute + time.Duration(float64(max(size, 0))/(1<<20)*float64(time.Second))
}
