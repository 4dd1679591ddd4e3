package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func testTokens(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateAndGetByHash", func(t *testing.T) {
		cases := []struct {
			name              string
			expires, lastUsed *time.Time
		}{
			{"NoTimes", nil, nil},
			{"Expires", ptr(now().Add(90 * 24 * time.Hour)), nil},
			{"LastUsed", nil, ptr(now().Add(-time.Hour))},
			{"Both", ptr(now().Add(time.Hour)), ptr(now().Add(-time.Second))},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s, ctx := open(t), t.Context()
				f := createOrganization(t, s)
				tk := newToken(f.org.ID, f.owner.User.ID)
				tk.ExpiresAt, tk.LastUsedAt = c.expires, c.lastUsed
				wantOK(t, s.CreateToken(ctx, tk), "CreateToken")
				got, err := s.GetTokenByHash(ctx, tk.Hash)
				wantOK(t, err, "GetTokenByHash")
				wantEqual(t, "token", got, tk)
			})
		}
	})

	t.Run("UnknownHashIsNotFound", func(t *testing.T) {
		s := open(t)
		_, err := s.GetTokenByHash(t.Context(), newToken(kiln.NewID(), kiln.NewID()).Hash)
		wantCode(t, err, kiln.ENotFound, "GetTokenByHash of an unknown hash")
	})

	t.Run("DuplicateHashIsConflict", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		tk := newToken(f.org.ID, f.owner.User.ID)
		tk.Hash = f.token.Hash
		wantCode(t, s.CreateToken(ctx, tk), kiln.EConflict, "CreateToken with a taken hash")
		got, err := s.GetTokenByHash(ctx, f.token.Hash)
		wantOK(t, err, "GetTokenByHash")
		wantEqual(t, "first token", got, f.token)
	})

	t.Run("ListOnlyTheUsersTokens", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		m := newMember(f.org.ID, "dev@example.com", kiln.RoleMember)
		mToken := newToken(f.org.ID, m.User.ID)
		wantOK(t, s.CreateMember(ctx, m, mToken), "CreateMember")
		ids := []string{f.token.ID}
		byID := map[string]*kiln.Token{f.token.ID: f.token}
		for i := range 4 {
			tk := newToken(f.org.ID, f.owner.User.ID)
			if i%2 == 0 {
				tk.ExpiresAt = ptr(now().Add(time.Hour))
			}
			wantOK(t, s.CreateToken(ctx, tk), "CreateToken")
			ids = append(ids, tk.ID)
			byID[tk.ID] = tk
			wantOK(t, s.CreateToken(ctx, newToken(f.org.ID, m.User.ID)), "CreateToken for the other user")
		}
		for _, limit := range []int{1, 2, 3, 5, store.MaxLimit} {
			got := walk(t, limit, func(p store.Page) ([]*kiln.Token, string, error) {
				return s.ListTokens(ctx, f.org.ID, f.owner.User.ID, p)
			}, tokenID, nil)
			wantIDs(t, "ListTokens", got, newestFirst(ids))
		}
		items, _, err := s.ListTokens(ctx, f.org.ID, f.owner.User.ID, store.Page{Limit: store.MaxLimit})
		wantOK(t, err, "ListTokens")
		for _, tk := range items {
			wantEqual(t, "listed token", tk, byID[tk.ID])
		}
		other := createOrganization(t, s)
		items, next, err := s.ListTokens(ctx, other.org.ID, f.owner.User.ID, store.Page{Limit: store.MaxLimit})
		wantOK(t, err, "ListTokens in another organization")
		if len(items) != 0 || next != "" {
			t.Fatalf("ListTokens of a user under another organization: %d items, next %q", len(items), next)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		tk := newToken(f.org.ID, f.owner.User.ID)
		wantOK(t, s.CreateToken(ctx, tk), "CreateToken")
		wantOK(t, s.DeleteToken(ctx, f.org.ID, f.owner.User.ID, tk.ID), "DeleteToken")
		_, err := s.GetTokenByHash(ctx, tk.Hash)
		wantCode(t, err, kiln.ENotFound, "GetTokenByHash of a deleted token")
		got := walk(t, 10, func(p store.Page) ([]*kiln.Token, string, error) {
			return s.ListTokens(ctx, f.org.ID, f.owner.User.ID, p)
		}, tokenID, nil)
		wantIDs(t, "ListTokens after delete", got, []string{f.token.ID})
		wantCode(t, s.DeleteToken(ctx, f.org.ID, f.owner.User.ID, tk.ID), kiln.ENotFound, "DeleteToken again")
	})

	t.Run("RevokingATokenRevokesItsDescendants", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		child := func(parent *kiln.Token) *kiln.Token {
			tk := newToken(f.org.ID, f.owner.User.ID)
			if parent != nil {
				tk.ParentID = parent.ID
			}
			wantOK(t, s.CreateToken(ctx, tk), "CreateToken")
			return tk
		}
		root := child(nil)
		a, b := child(root), child(root)
		a1, a2 := child(a), child(a)
		a11 := child(a1)
		other := child(nil)
		otherChild := child(other)
		got, err := s.GetTokenByHash(ctx, a11.Hash)
		wantOK(t, err, "GetTokenByHash")
		wantEqual(t, "token with a parent", got, a11)

		wantOK(t, s.DeleteToken(ctx, f.org.ID, f.owner.User.ID, a.ID), "DeleteToken of a child")
		for _, gone := range []*kiln.Token{a, a1, a2, a11} {
			_, err := s.GetTokenByHash(ctx, gone.Hash)
			wantCode(t, err, kiln.ENotFound, "GetTokenByHash of a revoked token's descendant")
		}
		left := walk(t, 10, func(p store.Page) ([]*kiln.Token, string, error) {
			return s.ListTokens(ctx, f.org.ID, f.owner.User.ID, p)
		}, tokenID, nil)
		wantIDs(t, "ListTokens after revoking a", left, newestFirst([]string{f.token.ID, root.ID, b.ID, other.ID, otherChild.ID}))

		// A token cannot be created from a revoked one.
		orphan := newToken(f.org.ID, f.owner.User.ID)
		orphan.ParentID = a.ID
		wantCode(t, s.CreateToken(ctx, orphan), kiln.ENotFound, "CreateToken with a revoked parent")
		_, err = s.GetTokenByHash(ctx, orphan.Hash)
		wantCode(t, err, kiln.ENotFound, "GetTokenByHash of a token refused for its parent")

		wantOK(t, s.DeleteToken(ctx, f.org.ID, f.owner.User.ID, root.ID), "DeleteToken of the root")
		for _, gone := range []*kiln.Token{root, b} {
			_, err := s.GetTokenByHash(ctx, gone.Hash)
			wantCode(t, err, kiln.ENotFound, "GetTokenByHash of a revoked token")
		}
		for _, kept := range []*kiln.Token{f.token, other, otherChild} {
			_, err := s.GetTokenByHash(ctx, kept.Hash)
			wantOK(t, err, "GetTokenByHash of a token outside the revoked tree")
		}
	})

	t.Run("DeleteOfAnotherUserOrOrganizationIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		m := newMember(f.org.ID, "dev@example.com", kiln.RoleAdmin)
		wantOK(t, s.CreateMember(ctx, m, newToken(f.org.ID, m.User.ID)), "CreateMember")
		cases := []struct{ name, org, user, id string }{
			{"OtherUser", f.org.ID, m.User.ID, f.token.ID},
			{"OtherOrganization", other.org.ID, f.owner.User.ID, f.token.ID},
			{"OtherOrganizationsUser", other.org.ID, other.owner.User.ID, f.token.ID},
			{"UnknownToken", f.org.ID, f.owner.User.ID, kiln.NewID()},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantCode(t, s.DeleteToken(ctx, c.org, c.user, c.id), kiln.ENotFound, "DeleteToken")
				got, err := s.GetTokenByHash(ctx, f.token.Hash)
				wantOK(t, err, "GetTokenByHash after a refused delete")
				wantEqual(t, "token", got, f.token)
			})
		}
	})
}
