package dynamostore

import (
	"context"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// tokenItem is an API token, stored twice with the same attributes: under its user in the
// organization's partition (PK "ORG#<org>", SK "TOKEN#<userId>#<tokenId>") and in its own
// partition for the lookup by hash (PK = SK = "TOKENHASH#<sha256>").
type tokenItem struct {
	itemKeys
	credentialItem
	UserID     string `dynamo:"userId"`
	ExpiresAt  *int64 `dynamo:"expiresAt,omitempty"`
	LastUsedAt *int64 `dynamo:"lastUsedAt,omitempty"`
	ParentID   string `dynamo:"parentId,omitempty"`
}

func newTokenItem(t *kiln.Token, keys itemKeys) *tokenItem {
	return &tokenItem{
		itemKeys: keys, credentialItem: newCredentialItem(&t.Credential),
		UserID: t.UserID, ExpiresAt: toMSPtr(t.ExpiresAt), LastUsedAt: toMSPtr(t.LastUsedAt), ParentID: t.ParentID,
	}
}

func (it *tokenItem) token() *kiln.Token {
	return &kiln.Token{
		Credential: it.credential(), UserID: it.UserID, ParentID: it.ParentID,
		ExpiresAt: fromMSPtr(it.ExpiresAt), LastUsedAt: fromMSPtr(it.LastUsedAt),
	}
}

// tokenPuts are the token item and its hash item, each written only if absent.
func (s *Store) tokenPuts(t *kiln.Token) []*dynamo.Put {
	return s.hashPairPuts(
		newTokenItem(t, itemKeys{PK: orgPK(t.OrganizationID), SK: tokenSK(t.UserID, t.ID), Type: typeToken}),
		newTokenItem(t, hashItemKeys(tokenHashKey(t.Hash), typeTokenHash)))
}

// CreateToken writes, in one transaction: a check that the member exists (and the parent token,
// if any, so none outlives a revocation of its parent), then the token and its hash item, each
// only if absent.
func (s *Store) CreateToken(ctx context.Context, t *kiln.Token) error {
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Check(s.table.Check(attrPK, orgPK(t.OrganizationID)).Range(attrSK, memberSK(t.UserID)).IfExists())
		if t.ParentID != "" {
			tx.Check(s.table.Check(attrPK, orgPK(t.OrganizationID)).Range(attrSK, tokenSK(t.UserID, t.ParentID)).IfExists())
		}
		for _, p := range s.tokenPuts(t) {
			tx.Put(p)
		}
	})
	if at := txFailedAt(err); at != nil {
		if at[0] == 0 {
			return kiln.NotFound("member")
		}
		if at[0] == 1 && t.ParentID != "" {
			return kiln.NotFound("parent token")
		}
		return kiln.Errorf(kiln.EConflict, "token already exists")
	}
	return wrap("create token", err)
}

// GetTokenByHash is one GetItem on "TOKENHASH#<hash>".
func (s *Store) GetTokenByHash(ctx context.Context, hash string) (*kiln.Token, error) {
	return get(ctx, s, "get token by hash", "token", tokenHashKey(hash), tokenHashKey(hash), (*tokenItem).token)
}

// ListTokens queries the organization's partition for SK begins_with "TOKEN#<userId>#", newest
// first.
func (s *Store) ListTokens(ctx context.Context, orgID, userID string, p store.Page) ([]*kiln.Token, string, error) {
	q := orgPageQuery(orgID, tokenPrefix(userID), p.After, tokenSK(userID, p.After))
	return list(ctx, s, "list tokens", q, limit(p), func(it *tokenItem) string { return it.ID }, (*tokenItem).token)
}

// DeleteToken revokes the token and its descendants (the tokens created with it, and theirs): it
// reads the user's tokens, then deletes the descendants, children last, and the token itself at
// the end, so that a failure half way leaves the token to revoke again.
func (s *Store) DeleteToken(ctx context.Context, orgID, userID, tokenID string) error {
	q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: orgPK(orgID), skPrefix: tokenPrefix(userID), forward: true}
	all, _, err := queryPage(ctx, s, q, 0, func(it *tokenItem) string { return it.ID })
	if err != nil {
		return wrap("delete token", err)
	}
	children := map[string][]string{}
	for _, it := range all {
		if it.ParentID != "" {
			children[it.ParentID] = append(children[it.ParentID], it.ID)
		}
	}
	// Breadth first from the token; deleted in reverse, deepest first.
	var doomed []string
	for queue := children[tokenID]; len(queue) > 0; queue = queue[1:] {
		doomed = append(doomed, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	for i := len(doomed) - 1; i >= 0; i-- {
		if err := s.deleteOneToken(ctx, orgID, userID, doomed[i]); err != nil && !kiln.IsCode(err, kiln.ENotFound) {
			return err
		}
	}
	return s.deleteOneToken(ctx, orgID, userID, tokenID)
}

// deleteOneToken reads the token (for its hash), then deletes the token item (if it still exists)
// and its hash item in one transaction.
func (s *Store) deleteOneToken(ctx context.Context, orgID, userID, tokenID string) error {
	it, err := getItem[tokenItem](ctx, s, "delete token", "token", orgPK(orgID), tokenSK(userID, tokenID))
	if err != nil {
		return err
	}
	return s.deleteHashPair(ctx, "delete token", "token", it.itemKeys, tokenHashKey(it.Hash))
}
