package httpapi

import (
	"testing"
	"time"
)

func TestLimitersRefillAndKeepKeysApart(t *testing.T) {
	l := newLimiters(RateLimit{PerSecond: 1, Burst: 3})
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if ok, _ := l.allow("a", now); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait := l.allow("a", now)
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("fourth request: ok=%v wait=%v, want refused for up to 1s", ok, wait)
	}
	if ok, _ := l.allow("b", now); !ok {
		t.Fatal("another key shares the budget")
	}
	if ok, _ := l.allow("a", now.Add(time.Second)); !ok {
		t.Fatal("no refill after a second")
	}
	l.allow("c", now.Add(time.Hour))
	if _, found := l.buckets["a"]; found {
		t.Error("idle buckets are not swept")
	}
	if retryAfterSeconds(1500*time.Millisecond) != 2 || retryAfterSeconds(time.Millisecond) != 1 {
		t.Error("Retry-After is not rounded up to whole seconds")
	}
}
