package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// past makes records (builds, deliveries) dated one millisecond apart from a base time on, their
// ids in that order, and settles those still in flight when the test ends.
type past[T any] struct {
	t    *testing.T
	s    store.Store
	ids  kiln.IDGenerator
	at   time.Time
	made []T
}

// newPast starts at base; settle is called, after the test, on every record made.
func newPast[T any](t *testing.T, s store.Store, base time.Time, settle func(ctx context.Context, v T)) *past[T] {
	p := &past[T]{t: t, s: s, at: base}
	t.Cleanup(func() {
		ctx := context.Background() // t.Context() is done by now
		for _, v := range p.made {
			settle(ctx, v)
		}
	})
	return p
}

// tick moves one millisecond on and returns an id and time of that millisecond.
func (p *past[T]) tick() (string, time.Time) {
	p.at = p.at.Add(time.Millisecond)
	return p.ids.New(p.at), p.at
}

// due is what a Due*Deliveries answer is ordered by, and why an item should not be in it ("" when
// it should).
type due struct {
	at    time.Time
	id    string
	fault string
}

// wantDue fails the test unless items, what answered limit, are no more than the limit (read as
// store.MaxLimit outside 1..MaxLimit), all belong (no fault) and come earliest due (then smallest
// id) first.
func wantDue[T any](t *testing.T, what string, limit int, items []T, of func(T) due) {
	t.Helper()
	n := limit
	if n < 1 || n > store.MaxLimit {
		n = store.MaxLimit
	}
	if len(items) > n {
		t.Fatalf("%s(%d): %d answered", what, limit, len(items))
	}
	for i, v := range items {
		d := of(v)
		if d.fault != "" {
			t.Fatalf("%s: %s", what, d.fault)
		}
		if prev := of(items[max(i-1, 0)]); i > 0 && !dueBefore(prev.at, prev.id, d.at, d.id) {
			t.Fatalf("%s: %s before %s, want earliest due first", what, prev.id, d.id)
		}
	}
}

// wantHead fails the test unless got starts with want (whole records).
func wantHead[T any](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) < len(want) {
		t.Fatalf("%s: %d, want at least %d", what, len(got), len(want))
	}
	wantEqual(t, fmt.Sprintf("head of the %s", what), got[:len(want)], want)
}
