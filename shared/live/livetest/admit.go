package livetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
)

func runAdmit(t *testing.T, newRegistry func(t *testing.T) live.Registry) {
	// Each case has the organization's sockets connected, others opened but not connected, and
	// sockets connected in another organization, then admits one more under limit.
	for _, tt := range []struct {
		name                        string
		connected, opened, otherOrg int
		limit                       int
		want                        error
	}{
		{name: "NoLimit", connected: 3, limit: 0},
		{name: "UnderTheLimit", connected: 1, limit: 2},
		{name: "AtTheLimit", connected: 2, limit: 2, want: live.ErrTooManyConns},
		{name: "OverTheLimit", connected: 3, limit: 2, want: live.ErrTooManyConns},
		{name: "UnconnectedSocketsDoNotCount", connected: 1, opened: 3, limit: 2},
		{name: "OtherOrganizationsDoNotCount", otherOrg: 3, limit: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRegistry(t)
			orgID := kiln.NewID()
			for range tt.connected {
				admit(t, r, orgID)
			}
			for range tt.opened {
				put(t, r, opened())
			}
			for range tt.otherOrg {
				admit(t, r, kiln.NewID())
			}
			c := opened()
			put(t, r, c)
			a := connected(c, orgID)
			err := r.Admit(t.Context(), a, tt.limit)
			if !errors.Is(err, tt.want) {
				t.Fatalf("admit: %v, want %v", err, tt.want)
			}
			if tt.want != nil {
				wantConn(t, r, c) // refused: still not connected
				return
			}
			wantConn(t, r, a)
		})
	}

	t.Run("UnknownSocket", func(t *testing.T) {
		r := newRegistry(t)
		c := connected(opened(), kiln.NewID())
		if err := r.Admit(t.Context(), c, 0); !errors.Is(err, live.ErrNoConn) {
			t.Fatalf("admit a socket never opened: %v, want ErrNoConn", err)
		}
		wantNoConn(t, r, c.ID)
	})

	t.Run("AdmittedAgainDoesNotCountItself", func(t *testing.T) {
		r := newRegistry(t)
		orgID := kiln.NewID()
		a := admit(t, r, orgID)
		again := *a
		again.SocketID = kiln.NewID()
		if err := r.Admit(t.Context(), &again, 1); err != nil {
			t.Fatalf("admit the organization's only socket again under limit 1: %v", err)
		}
		wantConn(t, r, &again)
		// Still one socket: a second is refused at limit 1, and admitted at 2.
		c := opened()
		put(t, r, c)
		if err := r.Admit(t.Context(), connected(c, orgID), 1); !errors.Is(err, live.ErrTooManyConns) {
			t.Fatalf("admit a second socket under limit 1: %v, want ErrTooManyConns", err)
		}
		if err := r.Admit(t.Context(), connected(c, orgID), 2); err != nil {
			t.Fatalf("admit a second socket under limit 2: %v", err)
		}
	})

	t.Run("AdmittedIntoAnotherOrganization", func(t *testing.T) {
		r := newRegistry(t)
		ctx := t.Context()
		first, second := kiln.NewID(), kiln.NewID()
		a := admit(t, r, first)
		moved := connected(a, second)
		if err := r.Admit(ctx, moved, 1); err != nil {
			t.Fatalf("admit into another organization: %v", err)
		}
		wantConn(t, r, moved)
		for _, org := range []struct {
			id   string
			want []*live.Conn
		}{{first, nil}, {second, []*live.Conn{moved}}} {
			got, err := r.OrganizationConns(ctx, org.id)
			if err != nil {
				t.Fatal(err)
			}
			wantIDs(t, "organization's sockets", got, org.want...)
		}
		c := opened()
		put(t, r, c)
		if err := r.Admit(ctx, connected(c, first), 1); err != nil {
			t.Fatalf("admit into the organization the other socket left: %v", err)
		}
	})

	t.Run("DeleteFreesAPlace", func(t *testing.T) {
		r := newRegistry(t)
		orgID := kiln.NewID()
		a := admit(t, r, orgID)
		c := opened()
		put(t, r, c)
		if err := r.Admit(t.Context(), connected(c, orgID), 1); !errors.Is(err, live.ErrTooManyConns) {
			t.Fatalf("admit at the limit: %v, want ErrTooManyConns", err)
		}
		if err := r.DeleteConn(t.Context(), a.ID); err != nil {
			t.Fatal(err)
		}
		if err := r.Admit(t.Context(), connected(c, orgID), 1); err != nil {
			t.Fatalf("admit after the other socket closed: %v", err)
		}
	})

	t.Run("DisconnectedAndPutAgainFreesAPlace", func(t *testing.T) {
		// A Socket.IO DISCONNECT: the socket is deleted and put again, not connected.
		r := newRegistry(t)
		orgID := kiln.NewID()
		a := admit(t, r, orgID)
		if err := r.DeleteConn(t.Context(), a.ID); err != nil {
			t.Fatal(err)
		}
		put(t, r, &live.Conn{ID: a.ID, OpenedAt: a.OpenedAt, Expires: a.Expires})
		c := opened()
		put(t, r, c)
		if err := r.Admit(t.Context(), connected(c, orgID), 1); err != nil {
			t.Fatalf("admit after the other socket disconnected: %v", err)
		}
	})

	t.Run("PutNotConnectedFreesAPlace", func(t *testing.T) {
		r := newRegistry(t)
		orgID := kiln.NewID()
		a := admit(t, r, orgID)
		put(t, r, &live.Conn{ID: a.ID, OpenedAt: a.OpenedAt, Expires: a.Expires})
		if got, err := r.OrganizationConns(t.Context(), orgID); err != nil || len(got) != 0 {
			t.Fatalf("organization's sockets after its only one was put not connected: %v, %v", got, err)
		}
		c := opened()
		put(t, r, c)
		if err := r.Admit(t.Context(), connected(c, orgID), 1); err != nil {
			t.Fatalf("admit after the other socket was put not connected: %v", err)
		}
	})

	t.Run("ConcurrentConnectsStayWithinTheLimit", func(t *testing.T) {
		r := newRegistry(t)
		orgID := kiln.NewID()
		const limit, tries = 3, 8
		var wg sync.WaitGroup
		errs := make([]error, tries)
		for i := range tries {
			c := opened()
			put(t, r, c)
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = r.Admit(t.Context(), connected(c, orgID), limit)
			}()
		}
		wg.Wait()
		admitted := 0
		for _, err := range errs {
			switch {
			case err == nil:
				admitted++
			case !errors.Is(err, live.ErrTooManyConns):
				t.Fatalf("admit: %v", err)
			}
		}
		got, err := r.OrganizationConns(t.Context(), orgID)
		if err != nil {
			t.Fatal(err)
		}
		if admitted != limit || len(got) != limit {
			t.Fatalf("%d of %d admitted at once under limit %d, %d listed: want %d", admitted, tries, limit, len(got), limit)
		}
	})
}
