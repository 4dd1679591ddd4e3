package deliverytest

import (
	"context"
	"testing"
)

// RunUntilEnd runs run in a goroutine (a dispatcher's or a scheduler's Run) until the test ends;
// then it cancels run's context and waits for run to return.
func RunUntilEnd(t testing.TB, run func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })
}

// WaitAll waits as WaitDone until done holds of every one of items.
func WaitAll[T any](t testing.TB, items []T, what string, done func(T) bool) {
	t.Helper()
	WaitDone(t, len(items), what, func() (n int) {
		for _, it := range items {
			if done(it) {
				n++
			}
		}
		return n
	})
}
