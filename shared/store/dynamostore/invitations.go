package dynamostore

import (
	"context"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// invitationItem is an invitation, stored twice with the same attributes, as API tokens are: in
// the organization's partition (PK "ORG#<org>", SK "INVITATION#<id>") and in its own partition
// for the lookup by hash (PK = SK = "INVITATIONHASH#<sha256>").
type invitationItem struct {
	itemKeys
	ID             string `dynamo:"id"`
	OrganizationID string `dynamo:"organizationId"`
	Email          string `dynamo:"email"`
	Role           string `dynamo:"role"`
	Hash           string `dynamo:"hash"`
	InvitedByID    string `dynamo:"invitedById"`
	InvitedByName  string `dynamo:"invitedByName"`
	CreatedAt      int64  `dynamo:"createdAt"`
	ExpiresAt      int64  `dynamo:"expiresAt"`
}

// invitationEmailItem holds which invitation an email (lower-cased) has in the organization, so
// that a new one replaces it: PK "ORG#<org>", SK "INVITEEMAIL#<email>".
type invitationEmailItem struct {
	itemKeys
	InvitationID string `dynamo:"invitationId"`
	Hash         string `dynamo:"hash"`
}

func newInvitationItem(inv *kiln.Invitation, keys itemKeys) *invitationItem {
	return &invitationItem{
		itemKeys: keys, ID: inv.ID, OrganizationID: inv.OrganizationID, Email: inv.Email, Role: string(inv.Role),
		Hash: inv.Hash, InvitedByID: inv.InvitedByID, InvitedByName: inv.InvitedByName,
		CreatedAt: toMS(inv.CreatedAt), ExpiresAt: toMS(inv.ExpiresAt),
	}
}

func (it *invitationItem) invitation() *kiln.Invitation {
	return &kiln.Invitation{
		ID: it.ID, OrganizationID: it.OrganizationID, Email: it.Email, Role: kiln.Role(it.Role), Hash: it.Hash,
		InvitedByID: it.InvitedByID, InvitedByName: it.InvitedByName,
		CreatedAt: fromMS(it.CreatedAt), ExpiresAt: fromMS(it.ExpiresAt),
	}
}

// CreateInvitation reads the email's invitation item, then writes in one transaction: checks that
// the organization exists and that no member has the email, the invitation and its hash item
// (each only if absent), the email's item (only if it still names the invitation read) and the
// deletion of the replaced invitation's two items.
func (s *Store) CreateInvitation(ctx context.Context, inv *kiln.Invitation) error {
	pk := orgPK(inv.OrganizationID)
	var old invitationEmailItem
	err := s.readItem(ctx, pk, invitationEmailSK(inv.Email), &old)
	replacing := err == nil
	if err != nil && !isNotFound(err) {
		return wrap("create invitation", err)
	}
	emailPut := s.table.Put(&invitationEmailItem{
		itemKeys:     itemKeys{PK: pk, SK: invitationEmailSK(inv.Email), Type: typeInviteEmail},
		InvitationID: inv.ID, Hash: inv.Hash,
	})
	if replacing {
		emailPut = emailPut.If("invitationId = ?", old.InvitationID)
	} else {
		emailPut = emailPut.If(notExists, attrPK)
	}
	err = s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Check(s.table.Check(attrPK, pk).Range(attrSK, orgSK).IfExists())
		tx.Check(s.table.Check(attrPK, pk).Range(attrSK, emailSK(inv.Email)).IfNotExists())
		for _, p := range s.hashPairPuts(
			newInvitationItem(inv, itemKeys{PK: pk, SK: invitationSK(inv.ID), Type: typeInvitation}),
			newInvitationItem(inv, hashItemKeys(invitationHashKey(inv.Hash), typeInviteHash))) {
			tx.Put(p)
		}
		tx.Put(emailPut)
		if replacing {
			tx.Delete(s.table.Delete(attrPK, pk).Range(attrSK, invitationSK(old.InvitationID)))
			tx.Delete(s.table.Delete(attrPK, invitationHashKey(old.Hash)).Range(attrSK, invitationHashKey(old.Hash)))
		}
	})
	if at := txFailedAt(err); at != nil {
		switch at[0] {
		case 0:
			return kiln.NotFound("organization")
		case 1:
			return kiln.Errorf(kiln.EConflict, "a member with this email already exists in the organization")
		case 4:
			return kiln.Errorf(kiln.EConflict, "the email's invitation changed meanwhile; try again")
		}
		return kiln.Errorf(kiln.EConflict, "the invitation already exists")
	}
	return wrap("create invitation", err)
}

// GetInvitationByHash is one GetItem on "INVITATIONHASH#<hash>".
func (s *Store) GetInvitationByHash(ctx context.Context, hash string) (*kiln.Invitation, error) {
	return get(ctx, s, "get invitation by hash", "invitation", invitationHashKey(hash), invitationHashKey(hash), (*invitationItem).invitation)
}

// ListInvitations queries the organization's partition for SK begins_with "INVITATION#", newest
// first.
func (s *Store) ListInvitations(ctx context.Context, orgID string, p store.Page) ([]*kiln.Invitation, string, error) {
	q := orgPageQuery(orgID, prefixInvite, p.After, invitationSK(p.After))
	return list(ctx, s, "list invitations", q, limit(p), func(it *invitationItem) string { return it.ID }, (*invitationItem).invitation)
}

// invitationDeletes are the deletions of the invitation's item (on cond, with args), its hash
// item and its email's item (only if that still names it).
func (s *Store) invitationDeletes(tx *dynamo.WriteTx, inv *kiln.Invitation, cond string, args ...any) {
	pk := orgPK(inv.OrganizationID)
	tx.Delete(s.table.Delete(attrPK, pk).Range(attrSK, invitationSK(inv.ID)).If(cond, args...))
	tx.Delete(s.table.Delete(attrPK, invitationHashKey(inv.Hash)).Range(attrSK, invitationHashKey(inv.Hash)))
	tx.Delete(s.table.Delete(attrPK, pk).Range(attrSK, invitationEmailSK(inv.Email)).If("invitationId = ?", inv.ID))
}

// DeleteInvitation reads the invitation (for its hash and email), then deletes its three items in
// one transaction, only if it is still there.
func (s *Store) DeleteInvitation(ctx context.Context, orgID, id string) error {
	it, err := getItem[invitationItem](ctx, s, "delete invitation", "invitation", orgPK(orgID), invitationSK(id))
	if err != nil {
		return err
	}
	err = s.runTx(ctx, func(tx *dynamo.WriteTx) { s.invitationDeletes(tx, it.invitation(), exists, attrPK) })
	if txFailedAt(err) != nil {
		return kiln.NotFound("invitation")
	}
	return wrap("delete invitation", err)
}

// AcceptInvitation writes in one transaction: a check that the organization exists, the deletion
// of the invitation's items (only if it is there and unexpired at now), and the member, email,
// token and token hash items (each only if absent; no token for a GitHub user).
func (s *Store) AcceptInvitation(ctx context.Context, inv *kiln.Invitation, now time.Time, m *kiln.Member, token *kiln.Token) error {
	puts := s.memberPuts(m)
	if token != nil { // a GitHub user joins without a token
		puts = append(puts, s.tokenPuts(token)...)
	}
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Check(s.table.Check(attrPK, orgPK(inv.OrganizationID)).Range(attrSK, orgSK).IfExists())
		s.invitationDeletes(tx, inv, "attribute_exists($) AND $ = ? AND $ > ?", attrPK, "hash", inv.Hash, "expiresAt", toMS(now))
		for _, p := range puts {
			tx.Put(p)
		}
	})
	if at := txFailedAt(err); at != nil {
		switch {
		case at[0] <= 3:
			return kiln.ErrInvitationInvalid()
		case at[0] == 5:
			return kiln.Errorf(kiln.EConflict, "a member with this email already exists in the organization")
		}
		return kiln.Errorf(kiln.EConflict, "the member or token already exists")
	}
	return wrap("accept invitation", err)
}
