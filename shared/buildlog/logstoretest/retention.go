package logstoretest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// RetainingFactory returns a fresh, empty store that keeps a build's log for retention from the
// build's creation, on the clock now.
type RetainingFactory func(t *testing.T, retention time.Duration, now func() time.Time) Store

// Retention is the contract of a store with a retention: a build's log is there until retention
// has passed since the build was created (its id's time), then reads as gone (no lines, last 0);
// a newer build's log stays.
func Retention(t *testing.T, open RetainingFactory) {
	const retention = 30 * 24 * time.Hour
	start := time.Now().UTC()
	var offset atomic.Int64
	now := func() time.Time { return start.Add(time.Duration(offset.Load())) }
	s := open(t, retention, now)
	ctx := t.Context()
	var ids kiln.IDGenerator
	org := kiln.NewID()
	old := ids.New(start.Add(-retention + time.Hour)) // expires in an hour
	young := ids.New(start)
	for _, b := range []string{old, young} {
		if err := s.Append(ctx, org, b, 1, lines(1, 50)...); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func(b string) (int, int64) {
		t.Helper()
		got, err := s.Read(ctx, org, b, 1, 1000)
		if err != nil {
			t.Fatal(err)
		}
		last, err := s.Last(ctx, org, b)
		if err != nil {
			t.Fatal(err)
		}
		return len(got), last
	}
	if n, last := readAll(old); n != 50 || last != 50 {
		t.Fatalf("before its expiry the old build's log has %d lines, last %d; want 50", n, last)
	}
	offset.Store(int64(2 * time.Hour))
	if n, last := readAll(old); n != 0 || last != 0 {
		t.Fatalf("after its retention the old build's log still has %d lines, last %d", n, last)
	}
	if n, last := readAll(young); n != 50 || last != 50 {
		t.Fatalf("the young build's log has %d lines, last %d; want 50", n, last)
	}
}
