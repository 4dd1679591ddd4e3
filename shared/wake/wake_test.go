package wake

import (
	"context"
	"testing"
	"time"
)

func TestSignalsCollapseAndWakeLateWaiters(t *testing.T) {
	var s Signal
	s.Notify()
	s.Notify() // collapses into the first
	select {
	case <-s.C():
	case <-time.After(time.Second):
		t.Fatal("a signal sent before waiting was lost")
	}
	select {
	case <-s.C():
		t.Fatal("two signals woke twice")
	case <-time.After(20 * time.Millisecond):
	}
	done := make(chan struct{})
	go func() { <-s.C(); close(done) }()
	s.Notify()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("a waiting loop was not woken")
	}
}

// TestEvery: the calls come one interval apart, none before the first interval, and stop when fn
// says so or when the context ends.
func TestEvery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stopAfter int // fn returns false on this call; 0: never
		cancelAt  int // the context ends during this call; 0: never
		wantCalls int
	}{
		{"fn stops", 3, 0, 3},
		{"context ends", 0, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			start, calls := time.Now(), 0
			done := make(chan struct{})
			go func() {
				defer close(done)
				Every(ctx, 10*time.Millisecond, func(context.Context) bool {
					calls++
					if calls == 1 && time.Since(start) < 10*time.Millisecond {
						t.Errorf("first call after %v, before one interval", time.Since(start))
					}
					if calls == tc.cancelAt {
						cancel()
					}
					return calls != tc.stopAfter
				})
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Every did not return")
			}
			if calls != tc.wantCalls {
				t.Errorf("fn called %d times, want %d", calls, tc.wantCalls)
			}
		})
	}
}
