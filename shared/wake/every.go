package wake

import (
	"context"
	"time"
)

// Every calls fn every interval, the first time one interval from now, until ctx ends or fn
// returns false. A call that outlasts the interval delays the next one rather than queueing calls.
func Every(ctx context.Context, interval time.Duration, fn func(ctx context.Context) bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !fn(ctx) {
			return
		}
	}
}
