// Package livetest is the contract suite every live.Registry passes (RunRegistry): sockets and
// their admission under an organization's limit, rooms and their limit per socket, and the lease
// protocol that lets one sender at a time send a socket a build's lines, also under races.
package livetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
)

// RunRegistry runs the suite; newRegistry returns a fresh, empty registry for each test.
func RunRegistry(t *testing.T, newRegistry func(t *testing.T) live.Registry) {
	t.Run("Conns", func(t *testing.T) { runConns(t, newRegistry) })
	t.Run("Admit", func(t *testing.T) { runAdmit(t, newRegistry) })
	t.Run("Rooms", func(t *testing.T) { runRooms(t, newRegistry) })
	t.Run("Lease", func(t *testing.T) { runLease(t, newRegistry) })
	t.Run("RoomsRace", func(t *testing.T) { runRoomsRace(t, newRegistry) })
	t.Run("LeaseRace", func(t *testing.T) { runLeaseRace(t, newRegistry) })
}

// t0 is a time at a registry's precision (milliseconds).
var t0 = time.Now().UTC().Truncate(time.Millisecond)

// opened is a socket as Open records it: not connected yet.
func opened() *live.Conn {
	return &live.Conn{ID: kiln.NewID(), OpenedAt: t0, Expires: t0.Add(24 * time.Hour)}
}

// connected is c with its CONNECT accepted for the organization.
func connected(c *live.Conn, orgID string) *live.Conn {
	cp := *c
	cp.OrgID, cp.UserID, cp.Role = orgID, kiln.NewID(), kiln.RoleMember
	cp.CredentialHash, cp.Session, cp.SocketID = "c0ffee"+kiln.NewID(), true, kiln.NewID()
	return &cp
}

// put records sockets as Open does.
func put(t *testing.T, r live.Registry, cs ...*live.Conn) {
	t.Helper()
	for _, c := range cs {
		if err := r.PutConn(t.Context(), c); err != nil {
			t.Fatalf("put %s: %v", c.ID, err)
		}
	}
}

// admit opens a socket and admits it into the organization without a limit.
func admit(t *testing.T, r live.Registry, orgID string) *live.Conn {
	t.Helper()
	c := opened()
	put(t, r, c)
	a := connected(c, orgID)
	if err := r.Admit(t.Context(), a, 0); err != nil {
		t.Fatalf("admit %s: %v", c.ID, err)
	}
	return a
}

// sameConn compares two sockets as stored (times by instant).
func sameConn(a, b *live.Conn) bool {
	x, y := *a, *b
	x.OpenedAt, x.Expires = x.OpenedAt.UTC(), x.Expires.UTC()
	y.OpenedAt, y.Expires = y.OpenedAt.UTC(), y.Expires.UTC()
	return x == y
}

func wantConn(t *testing.T, r live.Registry, want *live.Conn) {
	t.Helper()
	got, err := r.GetConn(t.Context(), want.ID)
	if err != nil {
		t.Fatalf("get %s: %v", want.ID, err)
	}
	if !sameConn(got, want) {
		t.Fatalf("get %s: %+v, want %+v", want.ID, got, want)
	}
}

func wantNoConn(t *testing.T, r live.Registry, id string) {
	t.Helper()
	if c, err := r.GetConn(t.Context(), id); !errors.Is(err, live.ErrNoConn) {
		t.Fatalf("get %s: %+v, %v, want ErrNoConn", id, c, err)
	}
}

// wantIDs checks that conns are exactly the sockets want, in any order, as stored.
func wantIDs(t *testing.T, what string, got []*live.Conn, want ...*live.Conn) {
	t.Helper()
	ids := func(cs []*live.Conn) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.ID
		}
		slices.Sort(out)
		return out
	}
	if g, w := ids(got), ids(want); !slices.Equal(g, w) {
		t.Fatalf("%s: %v, want %v", what, g, w)
	}
	for _, w := range want {
		i := slices.IndexFunc(got, func(c *live.Conn) bool { return c.ID == w.ID })
		if !sameConn(got[i], w) {
			t.Fatalf("%s: %+v, want %+v", what, got[i], w)
		}
	}
}

func runConns(t *testing.T, newRegistry func(t *testing.T) live.Registry) {
	t.Run("PutAndGet", func(t *testing.T) {
		r := newRegistry(t)
		c := opened()
		put(t, r, c)
		wantConn(t, r, c)
		wantNoConn(t, r, kiln.NewID())
	})

	t.Run("PutAgainReplaces", func(t *testing.T) {
		r := newRegistry(t)
		c := opened()
		put(t, r, c)
		c2 := *c
		c2.Expires = c.Expires.Add(time.Hour)
		put(t, r, &c2)
		wantConn(t, r, &c2)
	})

	t.Run("DeleteForgetsTheSocketAndItsRooms", func(t *testing.T) {
		r := newRegistry(t)
		ctx := t.Context()
		orgID := kiln.NewID()
		gone, stays := admit(t, r, orgID), admit(t, r, orgID)
		rooms := []live.Room{newRoom(orgID), newRoom(orgID)}
		for _, rm := range rooms {
			join(t, r, gone.ID, rm, 0)
			join(t, r, stays.ID, rm, 0)
		}
		if err := r.DeleteConn(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		wantNoConn(t, r, gone.ID)
		wantConn(t, r, stays)
		for _, rm := range rooms {
			wantMembers(t, r, rm, stays.ID)
			if _, _, err := r.Acquire(ctx, gone.ID, rm, time.Now().Add(time.Minute)); !errors.Is(err, live.ErrNotMember) {
				t.Fatalf("acquire in a room of a deleted socket: %v, want ErrNotMember", err)
			}
		}
		if err := r.DeleteConn(ctx, gone.ID); err != nil {
			t.Fatalf("delete again: %v", err)
		}
		if err := r.DeleteConn(ctx, kiln.NewID()); err != nil {
			t.Fatalf("delete an unknown socket: %v", err)
		}
	})

	t.Run("OrganizationConnsListsItsConnectedSockets", func(t *testing.T) {
		r := newRegistry(t)
		ctx := t.Context()
		orgID, other := kiln.NewID(), kiln.NewID()
		a, b := admit(t, r, orgID), admit(t, r, orgID)
		admit(t, r, other)
		put(t, r, opened()) // not connected: in no organization
		got, err := r.OrganizationConns(ctx, orgID)
		if err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "organization's sockets", got, a, b)
		if err := r.DeleteConn(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		got, err = r.OrganizationConns(ctx, orgID)
		if err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "organization's sockets after a delete", got, b)
		got, err = r.OrganizationConns(ctx, kiln.NewID())
		if err != nil || len(got) != 0 {
			t.Fatalf("sockets of an organization with none: %v, %v", got, err)
		}
	})

	t.Run("AllConnsListsEverySocket", func(t *testing.T) {
		r := newRegistry(t)
		ctx := t.Context()
		a, b := admit(t, r, kiln.NewID()), admit(t, r, kiln.NewID())
		c, gone := opened(), opened()
		put(t, r, c, gone)
		if err := r.DeleteConn(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		got, err := r.AllConns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "all sockets", got, a, b, c)
	})
}
