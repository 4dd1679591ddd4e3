package httpapi

import (
	"net/http"
	"sync"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// inUse counts what is in progress per key (log followers per build and per token, Perforce
// checks per organization), so that each key stays under its limit.
type inUse struct {
	mu sync.Mutex
	n  map[string]int
}

// slot is one key and the most uses it may have at once.
type slot struct {
	key string
	max int
}

// acquire takes one use of every slot if each is below its max, and returns the function that
// gives them back; when one is full it takes nothing and returns nil.
func (u *inUse) acquire(slots ...slot) (release func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, s := range slots {
		if u.n[s.key] >= s.max {
			return nil
		}
	}
	if u.n == nil {
		u.n = map[string]int{}
	}
	for _, s := range slots {
		u.n[s.key]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			u.mu.Lock()
			defer u.mu.Unlock()
			for _, s := range slots {
				if u.n[s.key]--; u.n[s.key] <= 0 {
					delete(u.n, s.key)
				}
			}
		})
	}
}

// busy answers 429 rate_limited with Retry-After for a request refused by an inUse limit.
func busy(w http.ResponseWriter, retryAfter int, format string, args ...any) error {
	w.Header().Set("Retry-After", itoa(retryAfter))
	return kiln.Errorf(kiln.ERateLimited, format, args...)
}
