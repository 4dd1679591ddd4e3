package wake

import (
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
