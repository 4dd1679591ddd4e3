package livetest

import (
	"errors"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
)

func runLease(t *testing.T, newRegistry func(t *testing.T) live.Registry) {
	// member returns a registry with a socket in a room at cursor start.
	start := live.Cursor{Seq: 3, Status: kiln.StatusPending}
	member := func(t *testing.T) (live.Registry, string, live.Room) {
		r := newRegistry(t)
		c := admit(t, r, kiln.NewID())
		rm := newRoom(c.OrgID)
		if err := r.Join(t.Context(), c.ID, rm, start, 0); err != nil {
			t.Fatal(err)
		}
		return r, c.ID, rm
	}

	t.Run("AcquireReleaseStoresTheCursor", func(t *testing.T) {
		r, id, rm := member(t)
		l := acquire(t, r, id, rm, start)
		wantHeld(t, r, id, rm)
		l.Cursor = live.Cursor{Seq: 10, Status: kiln.StatusRunning}
		wantReleased(t, r, id, rm, l, true)
		l2 := acquire(t, r, id, rm, l.Cursor)
		if l2.Token == l.Token {
			t.Fatalf("two leases with token %q", l.Token)
		}
	})

	t.Run("ExpiredLeaseCanBeTaken", func(t *testing.T) {
		r, id, rm := member(t)
		old, ok, err := r.Acquire(t.Context(), id, rm, time.Now().Add(-time.Second))
		if err != nil || !ok {
			t.Fatalf("acquire: %v, %v", ok, err)
		}
		l := acquire(t, r, id, rm, start)
		old.Seq = 50 // the expired holder's release stores nothing
		wantReleased(t, r, id, rm, old, true)
		wantHeld(t, r, id, rm)
		wantReleased(t, r, id, rm, l, true)
		acquire(t, r, id, rm, start)
	})

	t.Run("MarkedDirtyTheHolderSendsAgain", func(t *testing.T) {
		r, id, rm := member(t)
		l := acquire(t, r, id, rm, start)
		if err := r.MarkDirty(t.Context(), id, rm); err != nil {
			t.Fatal(err)
		}
		l.Seq = 7
		wantReleased(t, r, id, rm, l, false) // the mark is cleared, the lease kept
		wantHeld(t, r, id, rm)
		l.Seq = 8
		wantReleased(t, r, id, rm, l, true)
		acquire(t, r, id, rm, live.Cursor{Seq: 8, Status: start.Status})
	})

	t.Run("MarkedDirtyTheLeaseIsExtended", func(t *testing.T) {
		r, id, rm := member(t)
		l, ok, err := r.Acquire(t.Context(), id, rm, time.Now().Add(300*time.Millisecond))
		if err != nil || !ok {
			t.Fatalf("Acquire = %v, %v", ok, err)
		}
		if err := r.MarkDirty(t.Context(), id, rm); err != nil {
			t.Fatal(err)
		}
		l.Until = time.Now().Add(time.Hour)
		wantReleased(t, r, id, rm, l, false)
		time.Sleep(400 * time.Millisecond) // past the first until
		wantHeld(t, r, id, rm)
		l.Until = time.Time{}
		wantReleased(t, r, id, rm, l, true)
	})

	t.Run("MarkedDirtyTheCursorIsStored", func(t *testing.T) {
		r, id, rm := member(t)
		l := acquire(t, r, id, rm, start)
		if err := r.MarkDirty(t.Context(), id, rm); err != nil {
			t.Fatal(err)
		}
		l.Seq = 7
		wantReleased(t, r, id, rm, l, false)
		// The holder's lease runs out before it sends again: the next one starts at 7.
		if _, _, err := r.Acquire(t.Context(), id, rm, time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		wantReleased(t, r, id, rm, l, true) // stale once the lease was taken again
		acquire(t, r, id, rm, live.Cursor{Seq: 7, Status: start.Status})
	})

	t.Run("MarkBeforeTheLeaseIsTakenIsNotForItsHolder", func(t *testing.T) {
		r, id, rm := member(t)
		if err := r.MarkDirty(t.Context(), id, rm); err != nil {
			t.Fatal(err)
		}
		l := acquire(t, r, id, rm, start)
		wantReleased(t, r, id, rm, l, true)
	})

	t.Run("StaleLeaseAfterLeave", func(t *testing.T) {
		r, id, rm := member(t)
		l := acquire(t, r, id, rm, start)
		if err := r.Leave(t.Context(), id, rm); err != nil {
			t.Fatal(err)
		}
		l.Seq = 40
		wantReleased(t, r, id, rm, l, true)
		wantMembers(t, r, rm)
		if err := r.Join(t.Context(), id, rm, start, 0); err != nil {
			t.Fatal(err)
		}
		wantReleased(t, r, id, rm, l, true)
		acquire(t, r, id, rm, start)
	})

	t.Run("StaleLeaseAfterJoinAgain", func(t *testing.T) {
		r, id, rm := member(t)
		l := acquire(t, r, id, rm, start)
		if err := r.MarkDirty(t.Context(), id, rm); err != nil {
			t.Fatal(err)
		}
		again := live.Cursor{Seq: 1}
		if err := r.Join(t.Context(), id, rm, again, 0); err != nil {
			t.Fatal(err)
		}
		l.Seq = 40
		wantReleased(t, r, id, rm, l, true)
		l2 := acquire(t, r, id, rm, again)
		wantReleased(t, r, id, rm, l2, true) // the mark went with the old membership
	})

	t.Run("LeaseNeverTakenStoresNothing", func(t *testing.T) {
		r, id, rm := member(t)
		for _, token := range []string{"", "not-a-token"} {
			wantReleased(t, r, id, rm, live.Lease{Token: token, Cursor: live.Cursor{Seq: 99}}, true)
		}
		l := acquire(t, r, id, rm, start)
		wantReleased(t, r, id, rm, live.Lease{Cursor: live.Cursor{Seq: 99}}, true)
		wantHeld(t, r, id, rm)
		wantReleased(t, r, id, rm, l, true)
		acquire(t, r, id, rm, start)
	})

	t.Run("NotAMember", func(t *testing.T) {
		r, id, rm := member(t)
		ctx := t.Context()
		for _, tt := range []struct {
			name   string
			connID string
			room   live.Room
		}{
			{"OtherRoom", id, newRoom(rm.OrgID)},
			{"OtherSocket", kiln.NewID(), rm},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if _, ok, err := r.Acquire(ctx, tt.connID, tt.room, time.Now().Add(time.Minute)); !errors.Is(err, live.ErrNotMember) || ok {
					t.Fatalf("acquire: %v, %v, want ErrNotMember", ok, err)
				}
				if err := r.MarkDirty(ctx, tt.connID, tt.room); err != nil {
					t.Fatalf("mark dirty: %v", err)
				}
				wantReleased(t, r, tt.connID, tt.room, live.Lease{Token: "x", Cursor: live.Cursor{Seq: 99}}, true)
			})
		}
		wantMembers(t, r, rm, id)
		acquire(t, r, id, rm, start)
	})
}
