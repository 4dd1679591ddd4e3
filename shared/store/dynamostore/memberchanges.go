package dynamostore

import (
	"context"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// memberChangeAttempts bounds how often a member change is tried again when the owner it relied
// on changed meanwhile.
const memberChangeAttempts = 3

// SetMemberRole updates the member item on the condition that its role is still the one read.
// Demoting an owner also checks, in the same transaction, that another owner still is one; two
// owners demoting each other at once therefore cannot both succeed (the transactions conflict, or
// the second sees the first's change when it is tried again).
func (s *Store) SetMemberRole(ctx context.Context, orgID, userID string, role kiln.Role) (*kiln.Member, error) {
	m, err := s.changeMember(ctx, orgID, userID, role != kiln.RoleOwner, "set member role", func(tx *dynamo.WriteTx, m *kiln.Member) {
		tx.Update(s.table.Update(attrPK, orgPK(orgID)).Range(attrSK, memberSK(userID)).Set("role", string(role)).
			If("attribute_exists($) AND $ = ?", attrPK, "role", string(m.Role)))
	})
	if err != nil {
		return nil, err
	}
	m.Role = role
	return m, nil
}

// RemoveMember deletes the member and email items in one transaction (with the check of another
// owner when the member is one), then the member's tokens with their hash items. A token left by
// a crash in between no longer resolves: authentication reads the membership.
func (s *Store) RemoveMember(ctx context.Context, orgID, userID string) error {
	_, err := s.changeMember(ctx, orgID, userID, true, "remove member", func(tx *dynamo.WriteTx, m *kiln.Member) {
		tx.Delete(s.table.Delete(attrPK, orgPK(orgID)).Range(attrSK, memberSK(userID)).
			If("attribute_exists($) AND $ = ?", attrPK, "role", string(m.Role)))
		tx.Delete(s.table.Delete(attrPK, orgPK(orgID)).Range(attrSK, emailSK(m.User.Email)))
	})
	if err != nil {
		return err
	}
	return s.deleteMemberTokens(ctx, orgID, userID)
}

// changeMember reads the member (and, when the change takes away an owner's ownership, another
// owner), then runs change's writes in one transaction with the check that the other owner still
// is one. A failed condition (the member or the other owner changed meanwhile) reads again, up to
// memberChangeAttempts times, then is ErrLastOwner. It answers the member as read.
func (s *Store) changeMember(ctx context.Context, orgID, userID string, losing bool, op string,
	change func(tx *dynamo.WriteTx, m *kiln.Member)) (*kiln.Member, error) {
	for attempt := 1; ; attempt++ {
		m, other, err := s.memberForChange(ctx, orgID, userID, losing)
		if err != nil {
			return nil, err
		}
		err = s.runTx(ctx, func(tx *dynamo.WriteTx) {
			change(tx, m)
			if other != "" {
				tx.Check(s.ownerCheck(orgID, other))
			}
		})
		switch {
		case txFailedAt(err) != nil && attempt < memberChangeAttempts:
			continue
		case txFailedAt(err) != nil:
			return nil, kiln.ErrLastOwner()
		case err != nil:
			return nil, wrap(op, err)
		}
		return m, nil
	}
}

// deleteMemberTokens deletes every token of a user in the organization, with its hash item.
func (s *Store) deleteMemberTokens(ctx context.Context, orgID, userID string) error {
	q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: orgPK(orgID), skPrefix: tokenPrefix(userID), forward: true}
	all, _, err := queryPage(ctx, s, q, 0, func(it *tokenItem) string { return it.ID })
	if err != nil {
		return wrap("remove member's tokens", err)
	}
	for _, it := range all {
		if err := s.deleteHashPair(ctx, "remove member's tokens", "token", it.itemKeys, tokenHashKey(it.Hash)); err != nil && !kiln.IsCode(err, kiln.ENotFound) {
			return err
		}
	}
	return nil
}

// memberForChange reads the member; when the change takes away their ownership (losing) and they
// are an owner, it also answers another owner's user id, or ErrLastOwner when there is none.
func (s *Store) memberForChange(ctx context.Context, orgID, userID string, losing bool) (*kiln.Member, string, error) {
	m, err := s.GetMember(ctx, orgID, userID)
	if err != nil {
		return nil, "", err
	}
	if !losing || m.Role != kiln.RoleOwner {
		return m, "", nil
	}
	after := ""
	for {
		page, next, err := s.ListMembers(ctx, orgID, store.Page{After: after, Limit: 100})
		if err != nil {
			return nil, "", err
		}
		for _, o := range page {
			if o.Role == kiln.RoleOwner && o.User.ID != userID {
				return m, o.User.ID, nil
			}
		}
		if next == "" {
			return nil, "", kiln.ErrLastOwner()
		}
		after = next
	}
}

// ownerCheck is a transaction's check that a member is still an owner.
func (s *Store) ownerCheck(orgID, userID string) *dynamo.ConditionCheck {
	return s.table.Check(attrPK, orgPK(orgID)).Range(attrSK, memberSK(userID)).If("$ = ?", "role", string(kiln.RoleOwner))
}
