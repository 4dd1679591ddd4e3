package dynamostore

import (
	"context"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// memberItem is a user and their membership: PK "ORG#<org>", SK "MEMBER#<userId>", and in GSI1
// under the user (GSI1PK "USER#<userId>", GSI1SK "MEMBER#<org>") for ListMemberships.
type memberItem struct {
	itemKeys
	OrganizationID string `dynamo:"organizationId"`
	UserID         string `dynamo:"userId"`
	Email          string `dynamo:"email"`
	Name           string `dynamo:"name"`
	UserCreatedAt  int64  `dynamo:"userCreatedAt"`
	Role           string `dynamo:"role"`
	CreatedAt      int64  `dynamo:"createdAt"`
}

// emailItem reserves an email (lower-cased) within an organization: PK "ORG#<org>",
// SK "EMAIL#<email>".
type emailItem struct {
	itemKeys
	UserID string `dynamo:"userId"`
}

func newMemberItem(m *kiln.Member) *memberItem {
	return &memberItem{
		itemKeys: itemKeys{PK: orgPK(m.OrganizationID), SK: memberSK(m.User.ID), Type: typeMember,
			GSI1PK: userPK(m.User.ID), GSI1SK: membershipSK(m.OrganizationID)},
		OrganizationID: m.OrganizationID,
		UserID:         m.User.ID, Email: m.User.Email, Name: m.User.Name,
		UserCreatedAt: toMS(m.User.CreatedAt),
		Role:          string(m.Role),
		CreatedAt:     toMS(m.CreatedAt),
	}
}

func (it *memberItem) member() *kiln.Member {
	return &kiln.Member{
		OrganizationID: it.OrganizationID,
		User: kiln.User{
			ID: it.UserID, Email: it.Email, Name: it.Name, CreatedAt: fromMS(it.UserCreatedAt),
		},
		Role:      kiln.Role(it.Role),
		CreatedAt: fromMS(it.CreatedAt),
	}
}

// memberPuts are the member item and its email reservation, each written only if absent.
func (s *Store) memberPuts(m *kiln.Member) []*dynamo.Put {
	return []*dynamo.Put{
		s.table.Put(newMemberItem(m)).If(notExists, attrPK),
		s.table.Put(&emailItem{
			itemKeys: itemKeys{PK: orgPK(m.OrganizationID), SK: emailSK(m.User.Email), Type: typeEmail},
			UserID:   m.User.ID,
		}).If(notExists, attrPK),
	}
}

// CreateMember writes, in one transaction: a check that the organization exists, the member and
// email items (each only if absent) and, if given, the token with its hash item.
func (s *Store) CreateMember(ctx context.Context, m *kiln.Member, token *kiln.Token) error {
	puts := s.memberPuts(m)
	kinds := []string{"organization", "user id", "email"}
	if token != nil {
		puts = append(puts, s.tokenPuts(token)...)
		kinds = append(kinds, "token", "token hash")
	}
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Check(s.table.Check(attrPK, orgPK(m.OrganizationID)).Range(attrSK, orgSK).IfExists())
		for _, p := range puts {
			tx.Put(p)
		}
	})
	if at := txFailedAt(err); at != nil {
		if at[0] == 0 {
			return kiln.NotFound("organization")
		}
		return kiln.Errorf(kiln.EConflict, "%s is already taken", kinds[at[0]])
	}
	return wrap("create member", err)
}

func (s *Store) GetMember(ctx context.Context, orgID, userID string) (*kiln.Member, error) {
	return get(ctx, s, "get member", "member", orgPK(orgID), memberSK(userID), (*memberItem).member)
}

// ListMembers queries the organization's partition for SK begins_with "MEMBER#", newest user
// first.
func (s *Store) ListMembers(ctx context.Context, orgID string, p store.Page) ([]*kiln.Member, string, error) {
	q := orgPageQuery(orgID, prefixMember, p.After, memberSK(p.After))
	return list(ctx, s, "list members", q, limit(p), func(it *memberItem) string { return it.UserID }, (*memberItem).member)
}
