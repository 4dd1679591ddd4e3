package runner

import (
	"context"
	"testing"
	"time"
)

// free reports whether the workspace's lock can be taken at once (and gives it back).
func free(l *workspaceLocks, dir string) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	release, err := l.acquire(ctx, dir, nil)
	if err != nil {
		return false
	}
	release()
	return true
}

func TestWorkspaceLocks(t *testing.T) {
	var l workspaceLocks
	release, err := l.acquire(context.Background(), "/w/a", func() { t.Error("waited for a free workspace") })
	if err != nil {
		t.Fatal("a free workspace was not acquired")
	}
	if free(&l, "/w/a") {
		t.Fatal("a held workspace was acquired twice")
	}
	if !free(&l, "/w/b") {
		t.Fatal("another workspace is independent")
	}

	// A waiter says it waits, and gets the workspace when it is released, not before.
	waiting := make(chan struct{})
	got := make(chan func(), 1)
	go func() {
		r, err := l.acquire(context.Background(), "/w/a", func() { close(waiting) })
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	select {
	case <-waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not told it waits")
	}
	select {
	case <-got:
		t.Fatal("acquired while held")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case r := <-got:
		r()
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter never got the released workspace")
	}

	// A cancelled wait gives up with the context's error and holds nothing.
	release, _ = l.acquire(context.Background(), "/w/a", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.acquire(ctx, "/w/a", nil); err != context.Canceled {
		t.Fatalf("cancelled acquire: %v", err)
	}
	release()
	if !free(&l, "/w/a") {
		t.Fatal("the workspace stayed held after a cancelled wait")
	}
}
