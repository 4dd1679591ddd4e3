package livetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
)

// runLeaseRace has senders race on one membership as live.Service's senders do: each writes a
// line (adds 1 to written), then takes the lease (or marks it dirty for the holder and tries once
// more) and "sends" up to the last line written, again while Release says it was marked dirty.
// At no time do two senders hold the lease, the cursor never goes back, and at the end the stored
// cursor is the last line: no mark was lost.
func runLeaseRace(t *testing.T, newRegistry func(t *testing.T) live.Registry) {
	const senders, lines = 6, 4
	r := newRegistry(t)
	ctx := t.Context()
	c := admit(t, r, kiln.NewID())
	rm := newRoom(c.OrgID)
	join(t, r, c.ID, rm, 0)

	var written, sent atomic.Int64 // sent: the cursor last released
	var holding atomic.Bool
	send := func(l *live.Lease) error {
		if !holding.CompareAndSwap(false, true) {
			return fmt.Errorf("two senders hold the lease")
		}
		if l.Seq < sent.Load() {
			return fmt.Errorf("lease at %d after %d was released", l.Seq, sent.Load())
		}
		l.Seq = written.Load()
		sent.Store(l.Seq)
		holding.Store(false) // before Release: once it answers, another may hold it
		return nil
	}
	flush := func(ctx context.Context) error {
		until := time.Now().Add(time.Minute)
		l, ok, err := r.Acquire(ctx, c.ID, rm, until)
		if err != nil {
			return err
		}
		if !ok {
			if err := r.MarkDirty(ctx, c.ID, rm); err != nil {
				return err
			}
			if l, ok, err = r.Acquire(ctx, c.ID, rm, until); err != nil || !ok {
				return err
			}
		}
		for {
			if err := send(&l); err != nil {
				return err
			}
			released, err := r.Release(ctx, c.ID, rm, l)
			if err != nil || released {
				return err
			}
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, senders*lines)
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range lines {
				written.Add(1)
				if err := flush(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	acquire(t, r, c.ID, rm, live.Cursor{Seq: senders * lines})
}

// runRoomsRace: joins at the same moment stay within maxRooms, and a socket deleted while it
// joins rooms leaves no membership behind.
func runRoomsRace(t *testing.T, newRegistry func(t *testing.T) live.Registry) {
	t.Run("JoinsStayWithinMaxRooms", func(t *testing.T) {
		r := newRegistry(t)
		c := admit(t, r, kiln.NewID())
		const maxRooms, tries = 3, 6
		errs := make([]error, tries)
		var wg sync.WaitGroup
		for i := range tries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = r.Join(t.Context(), c.ID, newRoom(c.OrgID), live.Cursor{}, maxRooms)
			}()
		}
		wg.Wait()
		joined := 0
		for _, err := range errs {
			switch {
			case err == nil:
				joined++
			case !errors.Is(err, live.ErrTooManyRooms):
				t.Fatalf("join: %v", err)
			}
		}
		if joined != maxRooms {
			t.Fatalf("%d of %d joins at once under maxRooms %d succeeded", joined, tries, maxRooms)
		}
	})

	t.Run("DeleteWhileJoining", func(t *testing.T) {
		r := newRegistry(t)
		c := admit(t, r, kiln.NewID())
		rooms := []live.Room{newRoom(c.OrgID), newRoom(c.OrgID), newRoom(c.OrgID), newRoom(c.OrgID)}
		var wg sync.WaitGroup
		errs := make(chan error, len(rooms)+1)
		for _, rm := range rooms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.Join(t.Context(), c.ID, rm, live.Cursor{}, 0); err != nil && !errors.Is(err, live.ErrNoConn) {
					errs <- err
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.DeleteConn(t.Context(), c.ID); err != nil {
				errs <- err
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		wantNoConn(t, r, c.ID)
		for _, rm := range rooms {
			wantMembers(t, r, rm)
		}
	})
}
