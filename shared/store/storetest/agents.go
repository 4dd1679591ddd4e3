package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func newAgent(orgID string) *kiln.Agent {
	return &kiln.Agent{Credential: newCredential(orgID, "kagent_"), Pool: "win64-ue5.4"}
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

// agentKind is agents for the credential contract: a revoked agent is kept.
var agentKind = credentialKind[*kiln.Agent]{
	name:  "Agent",
	fresh: func(f fixture) *kiln.Agent { return newAgent(f.org.ID) },
	cred:  func(a *kiln.Agent) *kiln.Credential { return &a.Credential },
	variants: map[string]func(*kiln.Agent){
		"New": func(*kiln.Agent) {},
		"SeenAndRevoked": func(a *kiln.Agent) {
			a.RevokedAt, a.LastSeenAt = ptr(now().Add(-time.Minute)), ptr(now().Add(-time.Hour))
		},
	},
	create: func(ctx context.Context, s store.Store, a *kiln.Agent) error { return s.CreateAgent(ctx, a) },
	byHash: func(ctx context.Context, s store.Store, hash string) (*kiln.Agent, error) {
		return s.GetAgentByHash(ctx, hash)
	},
	list: func(ctx context.Context, s store.Store, f fixture, p store.Page) ([]*kiln.Agent, string, error) {
		return s.ListAgents(ctx, f.org.ID, p)
	},
	revoke: func(ctx context.Context, s store.Store, f fixture, id string, at time.Time) error {
		_, err := s.RevokeAgent(ctx, f.org.ID, id, at)
		return err
	},
	revoked: func(a *kiln.Agent, at time.Time) { a.RevokedAt = ptr(at) },
	touch: func(ctx context.Context, s store.Store, f fixture, id string, at time.Time) error {
		return s.TouchAgent(ctx, f.org.ID, id, at)
	},
	touched: func(a *kiln.Agent, at time.Time) { a.LastSeenAt = ptr(at) },
}

// testAgents are the contract's tests of what only agents have: a read by id, and a revocation
// that answers the agent.
func testAgents(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("GetByIDReadsWhatTheHashDoes", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		a := createAgent(t, s, f)
		wantStoredAgent(t, s, a)
		at := now()
		wantOK(t, s.TouchAgent(ctx, f.org.ID, a.ID, at), "TouchAgent")
		_, err := s.RevokeAgent(ctx, f.org.ID, a.ID, at)
		wantOK(t, err, "RevokeAgent")
		a.LastSeenAt, a.RevokedAt = ptr(at), ptr(at)
		wantStoredAgent(t, s, a)
		_, err = s.GetAgent(ctx, f.org.ID, kiln.NewID())
		wantCode(t, err, kiln.ENotFound, "GetAgent of an unknown agent")
		other := createOrganization(t, s)
		_, err = s.GetAgent(ctx, other.org.ID, a.ID)
		wantCode(t, err, kiln.ENotFound, "GetAgent from another organization")
	})

	t.Run("RevokeAnswersTheAgentWithItsFirstTime", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		a := createAgent(t, s, f)
		first := now().Add(-time.Minute)
		for _, at := range []time.Time{first, now()} {
			got, err := s.RevokeAgent(ctx, f.org.ID, a.ID, at)
			wantOK(t, err, "RevokeAgent")
			a.RevokedAt = ptr(first)
			wantEqual(t, "revoked agent", got, a)
		}
	})
}
