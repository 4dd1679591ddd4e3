package httpapi

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is the per-token request budget: a token bucket refilled at PerSecond, holding Burst.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// DefaultRateLimit suits people and scripts; a CI loop polling every second stays well inside.
var DefaultRateLimit = RateLimit{PerSecond: 10, Burst: 40}

// limiters keeps one token bucket per key (a token's hash, or a client address for requests
// without a valid token). Idle buckets are swept so the map stays small.
type limiters struct {
	cfg       RateLimit
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	limiter  *rate.Limiter
	lastSeen time.Time
}

// idleAfter is how long a bucket is kept without requests; a full bucket is the same as none.
const idleAfter = 10 * time.Minute

func newLimiters(cfg RateLimit) *limiters {
	return &limiters{cfg: cfg, buckets: map[string]*bucket{}}
}

// allow takes one request from key's bucket. When the bucket is empty it reports how long until
// a request would be allowed.
func (l *limiters) allow(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	ok, retryAfter, _ = l.take(key, now)
	return ok, retryAfter
}

// take is allow that also returns, when the request is allowed, a function that gives its budget
// back (for a request that turned out not to cost what the limit guards).
func (l *limiters) take(key string, now time.Time) (ok bool, retryAfter time.Duration, refund func()) {
	if l.cfg.PerSecond <= 0 {
		return true, 0, func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > idleAfter {
		for k, b := range l.buckets {
			if now.Sub(b.lastSeen) > idleAfter {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b, found := l.buckets[key]
	if !found {
		b = &bucket{limiter: rate.NewLimiter(rate.Limit(l.cfg.PerSecond), l.cfg.Burst)}
		l.buckets[key] = b
	}
	b.lastSeen = now
	r := b.limiter.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, nil
	}
	return true, 0, func() { r.CancelAt(now) }
}

// retryAfterSeconds rounds a delay up to whole seconds, at least 1, for the Retry-After header.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
