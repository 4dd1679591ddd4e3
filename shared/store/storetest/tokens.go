package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// tokenKind is API tokens for the credential contract: each of the fixture owner's.
var tokenKind = credentialKind[*kiln.Token]{
	name:    "Token",
	fresh:   func(f fixture) *kiln.Token { return newToken(f.org.ID, f.owner.User.ID) },
	cred:    func(tk *kiln.Token) *kiln.Credential { return &tk.Credential },
	initial: func(f fixture) []*kiln.Token { return []*kiln.Token{f.token} },
	variants: map[string]func(*kiln.Token){
		"NoTimes":  func(*kiln.Token) {},
		"Expires":  func(tk *kiln.Token) { tk.ExpiresAt = ptr(now().Add(90 * 24 * time.Hour)) },
		"LastUsed": func(tk *kiln.Token) { tk.LastUsedAt = ptr(now().Add(-time.Hour)) },
		"Both": func(tk *kiln.Token) {
			tk.ExpiresAt, tk.LastUsedAt = ptr(now().Add(time.Hour)), ptr(now().Add(-time.Second))
		},
	},
	create: func(ctx context.Context, s store.Store, tk *kiln.Token) error { return s.CreateToken(ctx, tk) },
	byHash: func(ctx context.Context, s store.Store, hash string) (*kiln.Token, error) {
		return s.GetTokenByHash(ctx, hash)
	},
	list: func(ctx context.Context, s store.Store, f fixture, p store.Page) ([]*kiln.Token, string, error) {
		return s.ListTokens(ctx, f.org.ID, f.owner.User.ID, p)
	},
	revoke: func(ctx context.Context, s store.Store, f fixture, id string, _ time.Time) error {
		return s.DeleteToken(ctx, f.org.ID, f.owner.User.ID, id)
	},
}

// testTokens are the contract's tests of what only API tokens have: a user, and parents.
func testTokens(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("ListOnlyTheUsersTokens", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		m := newMember(f.org.ID, "dev@example.com", kiln.RoleMember)
		mToken := newToken(f.org.ID, m.User.ID)
		wantOK(t, s.CreateMember(ctx, m, mToken), "CreateMember")
		owners, members := []string{f.token.ID}, []string{mToken.ID}
		for range 2 {
			owners = append(owners, tokenKind.stored(t, s, f).ID)
			tk := newToken(f.org.ID, m.User.ID)
			wantOK(t, s.CreateToken(ctx, tk), "CreateToken for the other user")
			members = append(members, tk.ID)
		}
		other := createOrganization(t, s)
		for _, c := range []struct {
			name, org, user string
			want            []string
		}{
			{"Owner", f.org.ID, f.owner.User.ID, owners},
			{"Member", f.org.ID, m.User.ID, members},
			{"OwnerUnderAnotherOrganization", other.org.ID, f.owner.User.ID, nil},
		} {
			got := walk(t, 2, func(p store.Page) ([]*kiln.Token, string, error) {
				return s.ListTokens(ctx, c.org, c.user, p)
			}, tokenID, nil)
			wantIDs(t, "ListTokens of "+c.name, got, newestFirst(c.want))
		}
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

	t.Run("DeleteOfAnotherUserIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		m := newMember(f.org.ID, "dev@example.com", kiln.RoleAdmin)
		wantOK(t, s.CreateMember(ctx, m, newToken(f.org.ID, m.User.ID)), "CreateMember")
		cases := []struct{ name, org, user, id string }{
			{"OtherUser", f.org.ID, m.User.ID, f.token.ID},
			{"OtherOrganization", other.org.ID, f.owner.User.ID, f.token.ID},
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
