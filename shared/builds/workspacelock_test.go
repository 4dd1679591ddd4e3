package builds

import (
	"context"
	"testing"
	"time"
)

func TestWorkspaceLocks(t *testing.T) {
	var l workspaceLocks
	release, ok := l.tryAcquire("/w/a")
	if !ok {
		t.Fatal("a free workspace was not acquired")
	}
	if _, ok := l.tryAcquire("/w/a"); ok {
		t.Fatal("a held workspace was acquired twice")
	}
	other, ok := l.tryAcquire("/w/b")
	if !ok {
		t.Fatal("another workspace is independent")
	}
	other()

	// A waiter gets the workspace when it is released, not before.
	got := make(chan func(), 1)
	go func() {
		r, err := l.acquire(context.Background(), "/w/a")
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
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
	release, _ = l.tryAcquire("/w/a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.acquire(ctx, "/w/a"); err != context.Canceled {
		t.Fatalf("cancelled acquire: %v", err)
	}
	release()
	if r, ok := l.tryAcquire("/w/a"); !ok {
		t.Fatal("the workspace stayed held after a cancelled wait")
	} else {
		r()
	}
}
