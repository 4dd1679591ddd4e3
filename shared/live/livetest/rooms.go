package livetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
)

func join(t *testing.T, r live.Registry, connID string, rm live.Room, seq int64) {
	t.Helper()
	if err := r.Join(t.Context(), connID, rm, live.Cursor{Seq: seq}, 0); err != nil {
		t.Fatalf("join %s to %v: %v", connID, rm, err)
	}
}

func wantMembers(t *testing.T, r live.Registry, rm live.Room, want ...string) {
	t.Helper()
	got, err := r.Members(t.Context(), rm)
	if err != nil {
		t.Fatalf("members of %v: %v", rm, err)
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("members of %v: %v, want %v", rm, got, want)
	}
}

func newRoom(orgID string) live.Room { return live.Room{OrgID: orgID, BuildID: kiln.NewID()} }

func runRooms(t *testing.T, newRegistry func(t *testing.T) live.Registry) {
	t.Run("JoinLeaveMembers", func(t *testing.T) {
		r := newRegistry(t)
		ctx := t.Context()
		orgID := kiln.NewID()
		a, b := admit(t, r, orgID), admit(t, r, orgID)
		rm, other := newRoom(orgID), newRoom(orgID)
		wantMembers(t, r, rm)
		join(t, r, a.ID, rm, 0)
		join(t, r, b.ID, rm, 0)
		join(t, r, b.ID, other, 0)
		wantMembers(t, r, rm, a.ID, b.ID)
		wantMembers(t, r, other, b.ID)
		// The same build id in another organization is another room.
		wantMembers(t, r, live.Room{OrgID: kiln.NewID(), BuildID: rm.BuildID})
		if err := r.Leave(ctx, a.ID, rm); err != nil {
			t.Fatal(err)
		}
		wantMembers(t, r, rm, b.ID)
		for _, tt := range []struct {
			name   string
			connID string
			room   live.Room
		}{
			{"RoomItIsNotIn", a.ID, other},
			{"RoomItLeft", a.ID, rm},
			{"UnknownSocket", kiln.NewID(), rm},
		} {
			if err := r.Leave(ctx, tt.connID, tt.room); err != nil {
				t.Fatalf("leave, %s: %v", tt.name, err)
			}
		}
		wantMembers(t, r, rm, b.ID)
		wantMembers(t, r, other, b.ID)
	})

	t.Run("JoinUnknownSocket", func(t *testing.T) {
		r := newRegistry(t)
		rm := newRoom(kiln.NewID())
		if err := r.Join(t.Context(), kiln.NewID(), rm, live.Cursor{}, 10); !errors.Is(err, live.ErrNoConn) {
			t.Fatalf("join of an unknown socket: %v, want ErrNoConn", err)
		}
		wantMembers(t, r, rm)
	})

	t.Run("MaxRooms", func(t *testing.T) {
		r := newRegistry(t)
		ctx := t.Context()
		orgID := kiln.NewID()
		c := admit(t, r, orgID)
		const maxRooms = 2
		rooms := []live.Room{newRoom(orgID), newRoom(orgID), newRoom(orgID)}
		steps := []struct {
			name  string
			leave bool
			room  live.Room
			want  error
		}{
			{name: "First", room: rooms[0]},
			{name: "Second", room: rooms[1]},
			{name: "OneTooMany", room: rooms[2], want: live.ErrTooManyRooms},
			{name: "OneItIsInAlready", room: rooms[0]},
			{name: "LeaveOne", leave: true, room: rooms[1]},
			{name: "ThirdAfterALeave", room: rooms[2]},
			{name: "OneTooManyAgain", room: rooms[1], want: live.ErrTooManyRooms},
		}
		for _, s := range steps {
			var err error
			if s.leave {
				err = r.Leave(ctx, c.ID, s.room)
			} else {
				err = r.Join(ctx, c.ID, s.room, live.Cursor{Seq: 1}, maxRooms)
			}
			if !errors.Is(err, s.want) {
				t.Fatalf("%s: %v, want %v", s.name, err, s.want)
			}
		}
		wantMembers(t, r, rooms[0], c.ID)
		wantMembers(t, r, rooms[1])
		wantMembers(t, r, rooms[2], c.ID)
	})

	t.Run("MaxRoomsZeroIsNoLimit", func(t *testing.T) {
		r := newRegistry(t)
		c := admit(t, r, kiln.NewID())
		for range 5 {
			if err := r.Join(t.Context(), c.ID, newRoom(c.OrgID), live.Cursor{}, 0); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("JoinAgainTakesTheNewCursorAndVoidsTheLease", func(t *testing.T) {
		r := newRegistry(t)
		ctx := t.Context()
		c := admit(t, r, kiln.NewID())
		rm := newRoom(c.OrgID)
		if err := r.Join(ctx, c.ID, rm, live.Cursor{Seq: 5, Status: kiln.StatusRunning}, 1); err != nil {
			t.Fatal(err)
		}
		old := acquire(t, r, c.ID, rm, live.Cursor{Seq: 5, Status: kiln.StatusRunning})
		if err := r.Join(ctx, c.ID, rm, live.Cursor{Seq: 9}, 1); err != nil {
			t.Fatalf("join a room it is in, at its most rooms: %v", err)
		}
		wantMembers(t, r, rm, c.ID)
		l := acquire(t, r, c.ID, rm, live.Cursor{Seq: 9}) // the old lease is void: free
		old.Seq = 100
		wantReleased(t, r, c.ID, rm, old, true)
		wantReleased(t, r, c.ID, rm, l, true)
		acquire(t, r, c.ID, rm, live.Cursor{Seq: 9}) // the void lease stored nothing
	})
}

// acquire takes the lease on a membership, which must be free, and checks its cursor.
func acquire(t *testing.T, r live.Registry, connID string, rm live.Room, want live.Cursor) live.Lease {
	t.Helper()
	l, ok, err := r.Acquire(t.Context(), connID, rm, time.Now().Add(time.Minute))
	if err != nil || !ok {
		t.Fatalf("acquire %s in %v: %v, %v, want a lease", connID, rm, ok, err)
	}
	if l.Cursor != want || l.Token == "" {
		t.Fatalf("acquire %s in %v: %+v, want cursor %+v and a token", connID, rm, l, want)
	}
	return l
}

func wantReleased(t *testing.T, r live.Registry, connID string, rm live.Room, l live.Lease, want bool) {
	t.Helper()
	released, err := r.Release(t.Context(), connID, rm, l)
	if err != nil || released != want {
		t.Fatalf("release %+v: %v, %v, want %v", l, released, err, want)
	}
}

func wantHeld(t *testing.T, r live.Registry, connID string, rm live.Room) {
	t.Helper()
	if l, ok, err := r.Acquire(t.Context(), connID, rm, time.Now().Add(time.Minute)); err != nil || ok {
		t.Fatalf("acquire a held lease: %+v, %v, %v, want not ok", l, ok, err)
	}
}
