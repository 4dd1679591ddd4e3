package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// newInvitation builds (without storing) an invitation of the fixture's organization, made by its
// owner, valid for a week from at.
func newInvitation(f fixture, email string, role kiln.Role, at time.Time) *kiln.Invitation {
	return &kiln.Invitation{
		ID: kiln.NewID(), OrganizationID: f.org.ID, Email: email, Role: role,
		Hash:        newCredential(f.org.ID, "kinv_").Hash,
		InvitedByID: f.owner.User.ID, InvitedByName: f.owner.User.Name,
		CreatedAt: at, ExpiresAt: at.Add(kiln.InvitationTTL),
	}
}

// acceptAs builds the member and token that accepting inv makes.
func acceptAs(inv *kiln.Invitation, name string) (*kiln.Member, *kiln.Token) {
	m := newMember(inv.OrganizationID, inv.Email, inv.Role)
	m.User.Name = name
	return m, newToken(inv.OrganizationID, m.User.ID)
}

func testInvitations(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetListDelete", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, other := createOrganization(t, s), createOrganization(t, s)
		at := now()
		a := newInvitation(f, "a@example.com", kiln.RoleMember, at)
		b := newInvitation(f, "b@example.com", kiln.RoleAdmin, at)
		wantOK(t, s.CreateInvitation(ctx, a), "create a")
		wantOK(t, s.CreateInvitation(ctx, b), "create b")
		wantOK(t, s.CreateInvitation(ctx, newInvitation(other, "a@example.com", kiln.RoleViewer, at)), "same email in another organization")
		got, err := s.GetInvitationByHash(ctx, a.Hash)
		wantOK(t, err, "get by hash")
		wantEqual(t, "invitation by hash", got, a)
		list, next, err := s.ListInvitations(ctx, f.org.ID, store.Page{})
		wantOK(t, err, "list")
		if next != "" {
			t.Fatalf("list: next %q, want none", next)
		}
		wantEqual(t, "list, newest first", list, []*kiln.Invitation{b, a})
		wantCode(t, s.DeleteInvitation(ctx, other.org.ID, a.ID), kiln.ENotFound, "delete from another organization")
		wantOK(t, s.DeleteInvitation(ctx, f.org.ID, a.ID), "delete")
		wantCode(t, s.DeleteInvitation(ctx, f.org.ID, a.ID), kiln.ENotFound, "delete again")
		_, err = s.GetInvitationByHash(ctx, a.Hash)
		wantCode(t, err, kiln.ENotFound, "get a revoked invitation")
		list, _, err = s.ListInvitations(ctx, f.org.ID, store.Page{})
		wantOK(t, err, "list after delete")
		wantEqual(t, "list after delete", list, []*kiln.Invitation{b})
		// The email is free again: a new invitation for it is a fresh one.
		wantOK(t, s.CreateInvitation(ctx, newInvitation(f, "a@example.com", kiln.RoleMember, at)), "invite a revoked email again")
	})

	t.Run("CreateRefusesAMembersEmailAndUnknownOrganization", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		inv := newInvitation(f, "OWNER-"+f.org.ID+"@Example.com", kiln.RoleMember, now())
		wantCode(t, s.CreateInvitation(ctx, inv), kiln.EConflict, "invite a member's email")
		_, err := s.GetInvitationByHash(ctx, inv.Hash)
		wantCode(t, err, kiln.ENotFound, "the refused invitation")
		ghost := newInvitation(newOrganization(), "x@example.com", kiln.RoleMember, now())
		wantCode(t, s.CreateInvitation(ctx, ghost), kiln.ENotFound, "invite to an unknown organization")
	})

	t.Run("ANewInvitationForTheEmailReplacesTheOld", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		old := newInvitation(f, "dev@example.com", kiln.RoleViewer, now())
		wantOK(t, s.CreateInvitation(ctx, old), "create old")
		repl := newInvitation(f, "Dev@Example.com", kiln.RoleAdmin, now())
		wantOK(t, s.CreateInvitation(ctx, repl), "create replacement")
		_, err := s.GetInvitationByHash(ctx, old.Hash)
		wantCode(t, err, kiln.ENotFound, "the replaced invitation")
		m, tok := acceptAs(old, "Dev")
		wantCode(t, s.AcceptInvitation(ctx, old, now(), m, tok), kiln.ENotFound, "accept the replaced invitation")
		list, _, err := s.ListInvitations(ctx, f.org.ID, store.Page{})
		wantOK(t, err, "list")
		wantEqual(t, "list", list, []*kiln.Invitation{repl})
		// Revoking the replacement frees the email; the old one is gone for good.
		wantOK(t, s.DeleteInvitation(ctx, f.org.ID, repl.ID), "revoke the replacement")
		wantCode(t, s.DeleteInvitation(ctx, f.org.ID, old.ID), kiln.ENotFound, "revoke the replaced one")
	})

	t.Run("AcceptCreatesTheMemberOnce", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		inv := newInvitation(f, "new@example.com", kiln.RoleAdmin, now())
		wantOK(t, s.CreateInvitation(ctx, inv), "create")
		m, tok := acceptAs(inv, "New Person")
		wantOK(t, s.AcceptInvitation(ctx, inv, now(), m, tok), "accept")
		got, err := s.GetMember(ctx, f.org.ID, m.User.ID)
		wantOK(t, err, "get the new member")
		wantEqual(t, "new member", got, m)
		gotTok, err := s.GetTokenByHash(ctx, tok.Hash)
		wantOK(t, err, "get the new member's token")
		wantEqual(t, "token", gotTok, tok)
		_, err = s.GetInvitationByHash(ctx, inv.Hash)
		wantCode(t, err, kiln.ENotFound, "the used invitation")
		list, _, err := s.ListInvitations(ctx, f.org.ID, store.Page{})
		wantOK(t, err, "list")
		wantEqual(t, "list after accept", list, []*kiln.Invitation(nil))
		m2, tok2 := acceptAs(inv, "Again")
		wantCode(t, s.AcceptInvitation(ctx, inv, now(), m2, tok2), kiln.ENotFound, "accept again")
		_, err = s.GetMember(ctx, f.org.ID, m2.User.ID)
		wantCode(t, err, kiln.ENotFound, "the second member")
		// The email now belongs to a member: it cannot be invited any more.
		wantCode(t, s.CreateInvitation(ctx, newInvitation(f, "new@example.com", kiln.RoleMember, now())), kiln.EConflict, "invite the new member")
	})

	t.Run("AcceptRefusesExpiredAndRevoked", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		inv := newInvitation(f, "late@example.com", kiln.RoleMember, now())
		wantOK(t, s.CreateInvitation(ctx, inv), "create")
		m, tok := acceptAs(inv, "Late")
		wantCode(t, s.AcceptInvitation(ctx, inv, inv.ExpiresAt, m, tok), kiln.ENotFound, "accept at expiry")
		_, err := s.GetMember(ctx, f.org.ID, m.User.ID)
		wantCode(t, err, kiln.ENotFound, "member of an expired invitation")
		// Expired invitations stay listed until revoked or replaced.
		list, _, err := s.ListInvitations(ctx, f.org.ID, store.Page{})
		wantOK(t, err, "list")
		wantEqual(t, "list with the expired one", list, []*kiln.Invitation{inv})
		wantOK(t, s.AcceptInvitation(ctx, inv, inv.ExpiresAt.Add(-time.Millisecond), m, tok), "accept just before expiry")

		rev := newInvitation(f, "rev@example.com", kiln.RoleMember, now())
		wantOK(t, s.CreateInvitation(ctx, rev), "create")
		wantOK(t, s.DeleteInvitation(ctx, f.org.ID, rev.ID), "revoke")
		m, tok = acceptAs(rev, "Rev")
		wantCode(t, s.AcceptInvitation(ctx, rev, now(), m, tok), kiln.ENotFound, "accept a revoked invitation")
	})

	t.Run("AcceptWhenTheEmailWasTakenMeanwhile", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		inv := newInvitation(f, "taken@example.com", kiln.RoleMember, now())
		wantOK(t, s.CreateInvitation(ctx, inv), "create")
		byHand := newMember(f.org.ID, "TAKEN@example.com", kiln.RoleViewer)
		wantOK(t, s.CreateMember(ctx, byHand, newToken(f.org.ID, byHand.User.ID)), "add the member by hand")
		m, tok := acceptAs(inv, "Taken")
		wantCode(t, s.AcceptInvitation(ctx, inv, now(), m, tok), kiln.EConflict, "accept a taken email")
		_, err := s.GetInvitationByHash(ctx, inv.Hash)
		wantOK(t, err, "the invitation stays")
	})

	t.Run("ConcurrentAcceptsHaveOneWinner", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		inv := newInvitation(f, "race@example.com", kiln.RoleMember, now())
		wantOK(t, s.CreateInvitation(ctx, inv), "create")
		at := now()
		errs := race(10, func(int) error {
			m, tok := acceptAs(inv, "Racer")
			return s.AcceptInvitation(ctx, inv, at, m, tok)
		})
		wantOneWinner(t, errs, kiln.ENotFound)
		members, _, err := s.ListMembers(ctx, f.org.ID, store.Page{})
		wantOK(t, err, "list members")
		if len(members) != 2 {
			t.Fatalf("%d members after the race, want the owner and one new member", len(members))
		}
	})
}
