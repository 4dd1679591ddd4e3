package dynamostore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"

	"github.com/kilnbuild/kiln/shared/live"
	"github.com/kilnbuild/kiln/shared/live/livetest"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// TestLiveRegistry runs the live registry's contract suite against DynamoDB Local.
func TestLiveRegistry(t *testing.T) {
	livetest.RunRegistry(t, func(t *testing.T) live.Registry {
		_, table := newStoreTable(t)
		return dynamostore.NewLiveRegistry(newDB(), table.Name())
	})
}

// newLive returns a live registry on a fresh table, and the table.
func newLive(t *testing.T) (*dynamostore.LiveRegistry, dynamo.Table) {
	t.Helper()
	_, table := newStoreTable(t)
	return dynamostore.NewLiveRegistry(newDB(), table.Name()), table
}

// liveSocket opens a socket and admits it into the organization (limit 0: none).
func liveSocket(t *testing.T, r *dynamostore.LiveRegistry, orgID string, expires time.Time) *live.Conn {
	t.Helper()
	c := &live.Conn{ID: kiln.NewID(), OpenedAt: expires.Add(-24 * time.Hour), Expires: expires}
	if err := r.PutConn(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	c.OrgID, c.UserID, c.Role = orgID, kiln.NewID(), kiln.RoleViewer
	if err := r.Admit(t.Context(), c, 0); err != nil {
		t.Fatal(err)
	}
	return c
}

func admitUnder(t *testing.T, r *dynamostore.LiveRegistry, orgID string, limit int) error {
	t.Helper()
	c := &live.Conn{ID: kiln.NewID(), OpenedAt: time.Now(), Expires: time.Now().Add(24 * time.Hour)}
	if err := r.PutConn(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	c.OrgID = orgID
	return r.Admit(t.Context(), c, limit)
}

// Every item of the registry carries ttl, its socket's expiry in Unix seconds (the count: the
// latest admitted socket's), for the table's time to live.
func TestLiveItemsExpireWithTheirSocket(t *testing.T) {
	r, table := newLive(t)
	ctx := t.Context()
	expires := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	c := liveSocket(t, r, kiln.NewID(), expires)
	if err := r.Join(ctx, c.ID, live.Room{OrgID: c.OrgID, BuildID: kiln.NewID()}, live.Cursor{Seq: 1}, 10); err != nil {
		t.Fatal(err)
	}
	var items []struct {
		Type string `dynamo:"type"`
		TTL  int64  `dynamo:"ttl"`
	}
	if err := table.Scan().All(ctx, &items); err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, it := range items {
		types[it.Type] = true
		if it.TTL != expires.Unix() {
			t.Errorf("%s item: ttl %d, want %d", it.Type, it.TTL, expires.Unix())
		}
	}
	for _, want := range []string{"livesocket", "liveorgsocket", "livecount", "livemember"} {
		if !types[want] {
			t.Errorf("no %s item among %v", want, types)
		}
	}
}

// A socket in more rooms than a transaction takes is deleted with all its memberships.
func TestLiveDeleteASocketInItsMostRooms(t *testing.T) {
	r, _ := newLive(t)
	ctx := t.Context()
	c := liveSocket(t, r, kiln.NewID(), time.Now().Add(time.Hour))
	var rooms []live.Room
	for range live.MaxRooms {
		rm := live.Room{OrgID: c.OrgID, BuildID: kiln.NewID()}
		if err := r.Join(ctx, c.ID, rm, live.Cursor{}, live.MaxRooms); err != nil {
			t.Fatal(err)
		}
		rooms = append(rooms, rm)
	}
	if err := r.DeleteConn(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetConn(ctx, c.ID); !errors.Is(err, live.ErrNoConn) {
		t.Fatalf("get the deleted socket: %v", err)
	}
	for _, rm := range rooms {
		if ids, err := r.Members(ctx, rm); err != nil || len(ids) != 0 {
			t.Fatalf("members of %v: %v, %v", rm, ids, err)
		}
	}
}

// The organization's count heals: a count left high, a count gone, and sockets past their expiry
// that the time to live has not deleted yet.
func TestLiveCountHeals(t *testing.T) {
	countKey := func(orgID string) (string, string) { return "ORG#" + orgID + "#LIVE", "COUNT" }
	t.Run("High", func(t *testing.T) {
		r, table := newLive(t)
		orgID := kiln.NewID()
		liveSocket(t, r, orgID, time.Now().Add(time.Hour))
		pk, sk := countKey(orgID)
		if err := table.Update("PK", pk).Range("SK", sk).Set("n", 5).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := admitUnder(t, r, orgID, 2); err != nil {
			t.Fatalf("admit the second of 2 with the count at 5: %v", err)
		}
		if err := admitUnder(t, r, orgID, 2); !errors.Is(err, live.ErrTooManyConns) {
			t.Fatalf("admit the third of 2: %v, want ErrTooManyConns", err)
		}
	})
	t.Run("Gone", func(t *testing.T) {
		r, table := newLive(t)
		orgID := kiln.NewID()
		liveSocket(t, r, orgID, time.Now().Add(time.Hour))
		liveSocket(t, r, orgID, time.Now().Add(time.Hour))
		pk, sk := countKey(orgID)
		if err := table.Delete("PK", pk).Range("SK", sk).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := admitUnder(t, r, orgID, 2); !errors.Is(err, live.ErrTooManyConns) {
			t.Fatalf("admit the third of 2 without a count: %v, want ErrTooManyConns", err)
		}
		if err := admitUnder(t, r, orgID, 3); err != nil {
			t.Fatalf("admit the third of 3: %v", err)
		}
	})
	t.Run("Expired", func(t *testing.T) {
		r, _ := newLive(t)
		ctx := t.Context()
		orgID := kiln.NewID()
		old := liveSocket(t, r, orgID, time.Now().Add(-time.Minute)) // its $disconnect never ran
		if err := admitUnder(t, r, orgID, 1); err != nil {
			t.Fatalf("admit with only an expired socket in the organization: %v", err)
		}
		conns, err := r.OrganizationConns(ctx, orgID)
		if err != nil || len(conns) != 1 || conns[0].ID == old.ID {
			t.Fatalf("organization's sockets: %v, %v: want the new one", conns, err)
		}
		// The expired socket goes at last: the place it no longer held is not given twice.
		if err := r.DeleteConn(ctx, old.ID); err != nil {
			t.Fatal(err)
		}
		if err := admitUnder(t, r, orgID, 1); !errors.Is(err, live.ErrTooManyConns) {
			t.Fatalf("admit a second of 1: %v, want ErrTooManyConns", err)
		}
	})
}
