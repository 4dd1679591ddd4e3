package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func newAgent(orgID string) *kiln.Agent {
	id := kiln.NewID()
	sum := sha256.Sum256([]byte("kagent_" + id))
	return &kiln.Agent{
		ID: id, OrganizationID: orgID, Name: "agent " + id, Pool: "win64-ue5.4",
		Hash: hex.EncodeToString(sum[:]), Hint: "kagent_" + id[:4], CreatedAt: now(),
	}
}

// createAgent stores a fresh agent of the fixture's organization.
func createAgent(t *testing.T, s store.Store, f fixture) *kiln.Agent {
	t.Helper()
	a := newAgent(f.org.ID)
	wantOK(t, s.CreateAgent(t.Context(), a), "CreateAgent")
	return a
}

// agentList is the paging suite's list of an organization's agents.
var agentList = pagedList{"Agents", func(t *testing.T, s store.Store) (func() string, []string, lister[string]) {
	f := createOrganization(t, s)
	add := func() string { return createAgent(t, s, f).ID }
	return add, nil, idsOf(func(p store.Page) ([]*kiln.Agent, string, error) {
		return s.ListAgents(t.Context(), f.org.ID, p)
	}, func(a *kiln.Agent) string { return a.ID })
}}

// wantStoredAgent fails the test unless the agent read by its hash and by its id is want.
func wantStoredAgent(t *testing.T, s store.Store, want *kiln.Agent) {
	t.Helper()
	got, err := s.GetAgentByHash(t.Context(), want.Hash)
	wantOK(t, err, "GetAgentByHash")
	wantEqual(t, "agent by hash", got, want)
	got, err = s.GetAgent(t.Context(), want.OrganizationID, want.ID)
	wantOK(t, err, "GetAgent")
	wantEqual(t, "agent", got, want)
}

func testAgents(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateAndGet", func(t *testing.T) {
		cases := []struct {
			name              string
			revoked, lastSeen *time.Time
		}{
			{"New", nil, nil},
			{"SeenAndRevoked", ptr(now().Add(-time.Minute)), ptr(now().Add(-time.Hour))},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s, ctx := open(t), t.Context()
				f := createOrganization(t, s)
				a := newAgent(f.org.ID)
				a.RevokedAt, a.LastSeenAt = c.revoked, c.lastSeen
				wantOK(t, s.CreateAgent(ctx, a), "CreateAgent")
				wantStoredAgent(t, s, a)
			})
		}
	})

	t.Run("UnknownIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		tk := createTriggerToken(t, s, f)
		for _, hash := range []string{newAgent(f.org.ID).Hash, f.token.Hash, tk.Hash} {
			_, err := s.GetAgentByHash(ctx, hash) // an API or trigger token is no agent
			wantCode(t, err, kiln.ENotFound, "GetAgentByHash")
		}
		_, err := s.GetAgent(ctx, f.org.ID, kiln.NewID())
		wantCode(t, err, kiln.ENotFound, "GetAgent")
	})

	t.Run("TakenHashOrIDIsConflict", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		first := createAgent(t, s, f)
		cases := []struct {
			name string
			make func() *kiln.Agent
		}{
			{"SameHash", func() *kiln.Agent { a := newAgent(f.org.ID); a.Hash = first.Hash; return a }},
			{"SameHashInAnotherOrganization", func() *kiln.Agent { a := newAgent(other.org.ID); a.Hash = first.Hash; return a }},
			{"SameID", func() *kiln.Agent { a := newAgent(f.org.ID); a.ID = first.ID; return a }},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a := c.make()
				wantCode(t, s.CreateAgent(ctx, a), kiln.EConflict, "CreateAgent")
				got, err := s.GetAgentByHash(ctx, first.Hash)
				wantOK(t, err, "GetAgentByHash of the first agent")
				wantEqual(t, "first agent", got, first)
				if a.Hash != first.Hash {
					_, err := s.GetAgentByHash(ctx, a.Hash)
					wantCode(t, err, kiln.ENotFound, "GetAgentByHash of the refused agent")
				}
			})
		}
	})

	t.Run("RevokeKeepsTheRecordAndItsFirstTime", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		a := createAgent(t, s, f)
		first := now().Add(-time.Minute)
		for _, at := range []time.Time{first, now()} {
			got, err := s.RevokeAgent(ctx, f.org.ID, a.ID, at)
			wantOK(t, err, "RevokeAgent")
			a.RevokedAt = ptr(first)
			wantEqual(t, "revoked agent", got, a)
			byHash, err := s.GetAgentByHash(ctx, a.Hash)
			wantOK(t, err, "GetAgentByHash")
			wantEqual(t, "revoked agent by hash", byHash, a)
			items, _, err := s.ListAgents(ctx, f.org.ID, store.Page{})
			wantOK(t, err, "ListAgents")
			wantEqual(t, "listed revoked agent", items[0], a)
		}
	})

	t.Run("TouchSetsLastSeenAt", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		a := createAgent(t, s, f)
		for _, at := range []time.Time{now().Add(-time.Minute), now()} {
			wantOK(t, s.TouchAgent(ctx, f.org.ID, a.ID, at), "TouchAgent")
			a.LastSeenAt = ptr(at)
			wantStoredAgent(t, s, a)
		}
	})

	t.Run("OtherOrganizationsCannotReach", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		a := createAgent(t, s, f)
		items, next, err := s.ListAgents(ctx, other.org.ID, store.Page{Limit: store.MaxLimit})
		wantOK(t, err, "ListAgents of another organization")
		if len(items) != 0 || next != "" {
			t.Fatalf("ListAgents of another organization: %d items, next %q", len(items), next)
		}
		cases := []struct {
			name string
			call func(orgID, id string) error
		}{
			{"Get", func(orgID, id string) error { _, err := s.GetAgent(ctx, orgID, id); return err }},
			{"Revoke", func(orgID, id string) error { _, err := s.RevokeAgent(ctx, orgID, id, now()); return err }},
			{"Touch", func(orgID, id string) error { return s.TouchAgent(ctx, orgID, id, now()) }},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantCode(t, c.call(other.org.ID, a.ID), kiln.ENotFound, c.name+" from another organization")
				wantCode(t, c.call(f.org.ID, kiln.NewID()), kiln.ENotFound, c.name+" of an unknown agent")
				got, err := s.GetAgentByHash(ctx, a.Hash)
				wantOK(t, err, "GetAgentByHash after a refused "+c.name)
				wantEqual(t, "agent", got, a)
			})
		}
	})
}
