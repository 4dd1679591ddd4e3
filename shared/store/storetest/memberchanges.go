package storetest

import (
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func testMemberChanges(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("SetRole", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		m := newMember(f.org.ID, "artist@example.com", kiln.RoleViewer)
		wantOK(t, s.CreateMember(ctx, m, newToken(f.org.ID, m.User.ID)), "CreateMember")

		for _, role := range []kiln.Role{kiln.RoleMember, kiln.RoleAdmin, kiln.RoleOwner, kiln.RoleViewer} {
			got, err := s.SetMemberRole(ctx, f.org.ID, m.User.ID, role)
			wantOK(t, err, "SetMemberRole "+string(role))
			want := *m
			want.Role = role
			wantEqual(t, "answered member", got, &want)
			read, err := s.GetMember(ctx, f.org.ID, m.User.ID)
			wantOK(t, err, "GetMember")
			wantEqual(t, "stored member", read, &want)
		}
		_, err := s.SetMemberRole(ctx, f.org.ID, kiln.NewID(), kiln.RoleAdmin)
		wantCode(t, err, kiln.ENotFound, "SetMemberRole of no member")
		other := createOrganization(t, s)
		_, err = s.SetMemberRole(ctx, other.org.ID, m.User.ID, kiln.RoleAdmin)
		wantCode(t, err, kiln.ENotFound, "SetMemberRole through another organization")
	})

	t.Run("LastOwnerStays", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		_, err := s.SetMemberRole(ctx, f.org.ID, f.owner.User.ID, kiln.RoleAdmin)
		wantCode(t, err, kiln.EInvalidState, "demoting the only owner")
		wantCode(t, s.RemoveMember(ctx, f.org.ID, f.owner.User.ID), kiln.EInvalidState, "removing the only owner")
		got, err := s.GetMember(ctx, f.org.ID, f.owner.User.ID)
		wantOK(t, err, "GetMember of the owner")
		wantEqual(t, "owner's role", got.Role, kiln.RoleOwner)
		_, err = s.GetTokenByHash(ctx, f.token.Hash)
		wantOK(t, err, "the owner's token after the refused removal")

		// With a second owner, the first may step down; then the second is the last.
		second := newMember(f.org.ID, "second@example.com", kiln.RoleOwner)
		wantOK(t, s.CreateMember(ctx, second, newToken(f.org.ID, second.User.ID)), "CreateMember")
		_, err = s.SetMemberRole(ctx, f.org.ID, f.owner.User.ID, kiln.RoleMember)
		wantOK(t, err, "demoting one of two owners")
		wantCode(t, s.RemoveMember(ctx, f.org.ID, second.User.ID), kiln.EInvalidState, "removing the owner left")
	})

	t.Run("RemoveRevokesTokens", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		m := newMember(f.org.ID, "contractor@example.com", kiln.RoleMember)
		first := newToken(f.org.ID, m.User.ID)
		wantOK(t, s.CreateMember(ctx, m, first), "CreateMember")
		second := newToken(f.org.ID, m.User.ID)
		wantOK(t, s.CreateToken(ctx, second), "CreateToken")
		kept := newMember(f.org.ID, "artist@example.com", kiln.RoleViewer)
		keptToken := newToken(f.org.ID, kept.User.ID)
		wantOK(t, s.CreateMember(ctx, kept, keptToken), "CreateMember")

		wantOK(t, s.RemoveMember(ctx, f.org.ID, m.User.ID), "RemoveMember")
		_, err := s.GetMember(ctx, f.org.ID, m.User.ID)
		wantCode(t, err, kiln.ENotFound, "GetMember of the removed member")
		for _, tk := range []*kiln.Token{first, second} {
			_, err := s.GetTokenByHash(ctx, tk.Hash)
			wantCode(t, err, kiln.ENotFound, "GetTokenByHash of the removed member's token")
		}
		_, err = s.GetTokenByHash(ctx, keptToken.Hash)
		wantOK(t, err, "another member's token")
		wantCode(t, s.RemoveMember(ctx, f.org.ID, m.User.ID), kiln.ENotFound, "removing again")

		// The email is free again: the person may be invited back.
		back := newMember(f.org.ID, "Contractor@example.com", kiln.RoleViewer)
		wantOK(t, s.CreateMember(ctx, back, newToken(f.org.ID, back.User.ID)), "CreateMember with the removed member's email")
	})

	t.Run("OwnersDemotingEachOtherAtOnce", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		second := newMember(f.org.ID, "second@example.com", kiln.RoleOwner)
		wantOK(t, s.CreateMember(ctx, second, newToken(f.org.ID, second.User.ID)), "CreateMember")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, id := range []string{f.owner.User.ID, second.User.ID} {
			wg.Go(func() {
				if i == 0 {
					_, errs[i] = s.SetMemberRole(ctx, f.org.ID, id, kiln.RoleAdmin)
				} else {
					errs[i] = s.RemoveMember(ctx, f.org.ID, id)
				}
			})
		}
		wg.Wait()
		owners := 0
		members, _, err := s.ListMembers(ctx, f.org.ID, store.Page{})
		wantOK(t, err, "ListMembers")
		for _, m := range members {
			if m.Role == kiln.RoleOwner {
				owners++
			}
		}
		if owners != 1 {
			t.Fatalf("after two owners stepped down at once (errors %v), %d owners remain, want 1", errs, owners)
		}
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("errors %v: want exactly one change refused", errs)
		}
		for _, err := range errs {
			if err != nil {
				wantCode(t, err, kiln.EInvalidState, "the refused change")
			}
		}
	})
}
