package storetest

import (
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func testMembers(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateWithToken", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		m := newMember(f.org.ID, "dev@example.com", kiln.RoleViewer)
		tk := newToken(f.org.ID, m.User.ID)
		wantOK(t, s.CreateMember(ctx, m, tk), "CreateMember")

		got, err := s.GetMember(ctx, f.org.ID, m.User.ID)
		wantOK(t, err, "GetMember")
		wantEqual(t, "member", got, m)
		gotToken, err := s.GetTokenByHash(ctx, tk.Hash)
		wantOK(t, err, "GetTokenByHash")
		wantEqual(t, "member's token", gotToken, tk)
	})

	t.Run("DuplicateEmailIsConflict", func(t *testing.T) {
		cases := []struct{ first, second string }{
			{"dev@example.com", "dev@example.com"},
			{"Dev@Example.com", "dev@example.COM"},
			{"ops@studio.io", "OPS@STUDIO.IO"},
		}
		for _, c := range cases {
			t.Run(c.second, func(t *testing.T) {
				s, ctx := open(t), t.Context()
				f := createOrganization(t, s)
				first := newMember(f.org.ID, c.first, kiln.RoleMember)
				wantOK(t, s.CreateMember(ctx, first, newToken(f.org.ID, first.User.ID)), "CreateMember")

				second := newMember(f.org.ID, c.second, kiln.RoleAdmin)
				tk := newToken(f.org.ID, second.User.ID)
				wantCode(t, s.CreateMember(ctx, second, tk), kiln.EConflict, "CreateMember with a taken email")
				_, err := s.GetTokenByHash(ctx, tk.Hash)
				wantCode(t, err, kiln.ENotFound, "GetTokenByHash of the refused member's token")
				_, err = s.GetMember(ctx, f.org.ID, second.User.ID)
				wantCode(t, err, kiln.ENotFound, "GetMember of the refused member")
				got, err := s.GetMember(ctx, f.org.ID, first.User.ID)
				wantOK(t, err, "GetMember of the first")
				wantEqual(t, "first member", got, first)
			})
		}
	})

	t.Run("OwnerEmailIsTaken", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		m := newMember(f.org.ID, strings.ToUpper(f.owner.User.Email), kiln.RoleMember)
		wantCode(t, s.CreateMember(ctx, m, newToken(f.org.ID, m.User.ID)), kiln.EConflict, "CreateMember with the owner's email")
	})

	t.Run("SameEmailInAnotherOrganization", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		a, b := createOrganization(t, s), createOrganization(t, s)
		ma := newMember(a.org.ID, "shared@example.com", kiln.RoleMember)
		mb := newMember(b.org.ID, "Shared@example.com", kiln.RoleMember)
		wantOK(t, s.CreateMember(ctx, ma, newToken(a.org.ID, ma.User.ID)), "CreateMember in a")
		wantOK(t, s.CreateMember(ctx, mb, newToken(b.org.ID, mb.User.ID)), "CreateMember in b")
		got, err := s.GetMember(ctx, b.org.ID, mb.User.ID)
		wantOK(t, err, "GetMember in b")
		wantEqual(t, "member of b", got, mb)
	})

	t.Run("GetOfAnotherOrganizationIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		a, b := createOrganization(t, s), createOrganization(t, s)
		_, err := s.GetMember(ctx, b.org.ID, a.owner.User.ID)
		wantCode(t, err, kiln.ENotFound, "GetMember of another organization's user")
		_, err = s.GetMember(ctx, a.org.ID, kiln.NewID())
		wantCode(t, err, kiln.ENotFound, "GetMember of an unknown user")
		_, err = s.GetMember(ctx, kiln.NewID(), a.owner.User.ID)
		wantCode(t, err, kiln.ENotFound, "GetMember in an unknown organization")
	})

	t.Run("ListNewestFirst", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s) // its members must not show up
		ids := []string{f.owner.User.ID}
		byID := map[string]*kiln.Member{f.owner.User.ID: f.owner}
		for i := range 5 {
			m := newMember(f.org.ID, "m"+string(rune('a'+i))+"@example.com", kiln.Roles[i%len(kiln.Roles)])
			wantOK(t, s.CreateMember(ctx, m, newToken(f.org.ID, m.User.ID)), "CreateMember")
			ids = append(ids, m.User.ID)
			byID[m.User.ID] = m
			om := newMember(other.org.ID, "o"+string(rune('a'+i))+"@example.com", kiln.RoleMember)
			wantOK(t, s.CreateMember(ctx, om, newToken(other.org.ID, om.User.ID)), "CreateMember in other")
		}
		for _, limit := range []int{1, 2, 4, 6, store.MaxLimit} {
			got := walk(t, limit, func(p store.Page) ([]*kiln.Member, string, error) {
				return s.ListMembers(ctx, f.org.ID, p)
			}, memberID, nil)
			wantIDs(t, "ListMembers", got, newestFirst(ids))
		}
		items, next, err := s.ListMembers(ctx, f.org.ID, store.Page{Limit: store.MaxLimit})
		wantOK(t, err, "ListMembers")
		if next != "" {
			t.Fatalf("ListMembers: next %q on the only page", next)
		}
		for _, m := range items {
			wantEqual(t, "listed member", m, byID[m.User.ID])
		}
	})
}
