package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func newTriggerToken(orgID, createdBy string) *kiln.TriggerToken {
	id := kiln.NewID()
	sum := sha256.Sum256([]byte("kiln_trigger_" + id))
	return &kiln.TriggerToken{
		ID:             id,
		OrganizationID: orgID,
		Name:           "trigger " + id,
		Hash:           hex.EncodeToString(sum[:]),
		Hint:           "kilnt_" + id[:4],
		CreatedBy:      createdBy,
		CreatedAt:      now(),
	}
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

func testTriggerTokens(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateAndGetByHash", func(t *testing.T) {
		cases := []struct {
			name     string
			lastUsed *time.Time
		}{
			{"NeverUsed", nil},
			{"LastUsed", ptr(now().Add(-time.Hour))},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s, ctx := open(t), t.Context()
				f := createOrganization(t, s)
				tk := newTriggerToken(f.org.ID, f.owner.User.ID)
				tk.LastUsedAt = c.lastUsed
				wantOK(t, s.CreateTriggerToken(ctx, tk), "CreateTriggerToken")
				got, err := s.GetTriggerTokenByHash(ctx, tk.Hash)
				wantOK(t, err, "GetTriggerTokenByHash")
				wantEqual(t, "trigger token", got, tk)
			})
		}
	})

	t.Run("UnknownHashIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		cases := []struct{ name, hash string }{
			{"Unknown", newTriggerToken(f.org.ID, f.owner.User.ID).Hash},
			{"APITokenHash", f.token.Hash}, // an API token is no trigger token
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.GetTriggerTokenByHash(ctx, c.hash)
				wantCode(t, err, kiln.ENotFound, "GetTriggerTokenByHash")
			})
		}
	})

	t.Run("TakenHashOrIDIsConflict", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		first := createTriggerToken(t, s, f)
		cases := []struct {
			name string
			make func() *kiln.TriggerToken
		}{
			{"SameHash", func() *kiln.TriggerToken {
				tk := newTriggerToken(f.org.ID, f.owner.User.ID)
				tk.Hash = first.Hash
				return tk
			}},
			{"SameHashInAnotherOrganization", func() *kiln.TriggerToken {
				tk := newTriggerToken(other.org.ID, other.owner.User.ID)
				tk.Hash = first.Hash
				return tk
			}},
			{"SameID", func() *kiln.TriggerToken {
				tk := newTriggerToken(f.org.ID, f.owner.User.ID)
				tk.ID = first.ID
				return tk
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				tk := c.make()
				wantCode(t, s.CreateTriggerToken(ctx, tk), kiln.EConflict, "CreateTriggerToken")
				got, err := s.GetTriggerTokenByHash(ctx, first.Hash)
				wantOK(t, err, "GetTriggerTokenByHash of the first token")
				wantEqual(t, "first token", got, first)
				if tk.Hash != first.Hash {
					_, err := s.GetTriggerTokenByHash(ctx, tk.Hash)
					wantCode(t, err, kiln.ENotFound, "GetTriggerTokenByHash of the refused token")
				}
			})
		}
	})

	t.Run("ListNewestFirst", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		byID := map[string]*kiln.TriggerToken{}
		var ids []string
		for range 3 {
			tk := createTriggerToken(t, s, f)
			byID[tk.ID] = tk
			ids = append(ids, tk.ID)
			createTriggerToken(t, s, other) // another organization's, never listed
		}
		want := newestFirst(ids)

		page, next, err := s.ListTriggerTokens(ctx, f.org.ID, store.Page{Limit: 2})
		wantOK(t, err, "ListTriggerTokens first page")
		wantIDs(t, "first page", triggerTokenIDs(page), want[:2])
		if next != want[1] {
			t.Fatalf("first page: next %q, want %q", next, want[1])
		}
		for _, tk := range page {
			wantEqual(t, "listed trigger token", tk, byID[tk.ID])
		}
		page, next, err = s.ListTriggerTokens(ctx, f.org.ID, store.Page{Limit: 2, After: next})
		wantOK(t, err, "ListTriggerTokens second page")
		wantIDs(t, "second page", triggerTokenIDs(page), want[2:])
		if next != "" {
			t.Fatalf("second page: next %q, want none", next)
		}
		wantEqual(t, "listed trigger token", page[0], byID[page[0].ID])
	})

	t.Run("OtherOrganizationsCannotReach", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		tk := createTriggerToken(t, s, f)

		items, next, err := s.ListTriggerTokens(ctx, other.org.ID, store.Page{Limit: store.MaxLimit})
		wantOK(t, err, "ListTriggerTokens of another organization")
		if len(items) != 0 || next != "" {
			t.Fatalf("ListTriggerTokens of another organization: %d items, next %q", len(items), next)
		}
		cases := []struct {
			name string
			call func(orgID, id string) error
		}{
			{"Delete", func(orgID, id string) error { return s.DeleteTriggerToken(ctx, orgID, id) }},
			{"Touch", func(orgID, id string) error { return s.TouchTriggerToken(ctx, orgID, id, now()) }},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantCode(t, c.call(other.org.ID, tk.ID), kiln.ENotFound, c.name+" from another organization")
				wantCode(t, c.call(f.org.ID, kiln.NewID()), kiln.ENotFound, c.name+" of an unknown token")
				got, err := s.GetTriggerTokenByHash(ctx, tk.Hash)
				wantOK(t, err, "GetTriggerTokenByHash after a refused "+c.name)
				wantEqual(t, "trigger token", got, tk)
			})
		}
		items, _, err = s.ListTriggerTokens(ctx, f.org.ID, store.Page{Limit: store.MaxLimit})
		wantOK(t, err, "ListTriggerTokens")
		wantIDs(t, "ListTriggerTokens of the owner", triggerTokenIDs(items), []string{tk.ID})
		wantEqual(t, "listed trigger token", items[0], tk)
	})

	t.Run("TouchSetsLastUsedAt", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		tk := createTriggerToken(t, s, f)
		for _, at := range []time.Time{now().Add(-time.Minute), now()} {
			wantOK(t, s.TouchTriggerToken(ctx, f.org.ID, tk.ID, at), "TouchTriggerToken")
			tk.LastUsedAt = ptr(at)
			got, err := s.GetTriggerTokenByHash(ctx, tk.Hash)
			wantOK(t, err, "GetTriggerTokenByHash")
			wantEqual(t, "touched trigger token", got, tk)
			items, _, err := s.ListTriggerTokens(ctx, f.org.ID, store.Page{})
			wantOK(t, err, "ListTriggerTokens")
			wantIDs(t, "ListTriggerTokens", triggerTokenIDs(items), []string{tk.ID})
			wantEqual(t, "listed touched trigger token", items[0], tk)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		tk, kept := createTriggerToken(t, s, f), createTriggerToken(t, s, f)
		wantOK(t, s.DeleteTriggerToken(ctx, f.org.ID, tk.ID), "DeleteTriggerToken")
		_, err := s.GetTriggerTokenByHash(ctx, tk.Hash)
		wantCode(t, err, kiln.ENotFound, "GetTriggerTokenByHash of a deleted token")
		got := walk(t, 10, func(p store.Page) ([]*kiln.TriggerToken, string, error) {
			return s.ListTriggerTokens(ctx, f.org.ID, p)
		}, triggerTokenID, nil)
		wantIDs(t, "ListTriggerTokens after delete", got, []string{kept.ID})
		wantCode(t, s.DeleteTriggerToken(ctx, f.org.ID, tk.ID), kiln.ENotFound, "DeleteTriggerToken again")
		wantCode(t, s.TouchTriggerToken(ctx, f.org.ID, tk.ID, now()), kiln.ENotFound, "TouchTriggerToken of a deleted token")
		_, err = s.GetTriggerTokenByHash(ctx, kept.Hash)
		wantOK(t, err, "GetTriggerTokenByHash of the other token")
		// The hash is free again.
		again := newTriggerToken(f.org.ID, f.owner.User.ID)
		again.Hash = tk.Hash
		wantOK(t, s.CreateTriggerToken(ctx, again), "CreateTriggerToken with a revoked token's hash")
	})
}

func triggerTokenIDs(items []*kiln.TriggerToken) []string {
	ids := make([]string, len(items))
	for i, tk := range items {
		ids[i] = tk.ID
	}
	return ids
}
