package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func newTriggerToken(orgID, createdBy string) *kiln.TriggerToken {
	return &kiln.TriggerToken{Credential: newCredential(orgID, "kilnp4_"), CreatedBy: createdBy}
}

// createTriggerToken stores a fresh trigger token of the fixture's organization, made by its owner.
func createTriggerToken(t *testing.T, s store.Store, f fixture) *kiln.TriggerToken {
	t.Helper()
	tk := newTriggerToken(f.org.ID, f.owner.User.ID)
	wantOK(t, s.CreateTriggerToken(t.Context(), tk), "CreateTriggerToken")
	return tk
}

func triggerTokenID(tk *kiln.TriggerToken) string { return tk.ID }

// triggerTokenList is the paging suite's list of an organization's trigger tokens.
var triggerTokenList = pagedList{"TriggerTokens", func(t *testing.T, s store.Store) (func() string, []string, lister[string]) {
	f := createOrganization(t, s)
	add := func() string { return createTriggerToken(t, s, f).ID }
	return add, nil, idsOf(func(p store.Page) ([]*kiln.TriggerToken, string, error) {
		return s.ListTriggerTokens(t.Context(), f.org.ID, p)
	}, triggerTokenID)
}}

// triggerTokenKind is Perforce trigger tokens for the credential contract.
var triggerTokenKind = credentialKind[*kiln.TriggerToken]{
	name:  "TriggerToken",
	fresh: func(f fixture) *kiln.TriggerToken { return newTriggerToken(f.org.ID, f.owner.User.ID) },
	cred:  func(tk *kiln.TriggerToken) *kiln.Credential { return &tk.Credential },
	variants: map[string]func(*kiln.TriggerToken){
		"NeverUsed": func(*kiln.TriggerToken) {},
		"LastUsed":  func(tk *kiln.TriggerToken) { tk.LastUsedAt = ptr(now().Add(-time.Hour)) },
	},
	create: func(ctx context.Context, s store.Store, tk *kiln.TriggerToken) error {
		return s.CreateTriggerToken(ctx, tk)
	},
	byHash: func(ctx context.Context, s store.Store, hash string) (*kiln.TriggerToken, error) {
		return s.GetTriggerTokenByHash(ctx, hash)
	},
	list: func(ctx context.Context, s store.Store, f fixture, p store.Page) ([]*kiln.TriggerToken, string, error) {
		return s.ListTriggerTokens(ctx, f.org.ID, p)
	},
	revoke: func(ctx context.Context, s store.Store, f fixture, id string, _ time.Time) error {
		return s.DeleteTriggerToken(ctx, f.org.ID, id)
	},
	touch: func(ctx context.Context, s store.Store, f fixture, id string, at time.Time) error {
		return s.TouchTriggerToken(ctx, f.org.ID, id, at)
	},
	touched: func(tk *kiln.TriggerToken, at time.Time) { tk.LastUsedAt = ptr(at) },
}
