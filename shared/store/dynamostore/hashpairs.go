package dynamostore

import (
	"context"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// API tokens, trigger tokens and agents are each stored twice with the same attributes: as the
// item in the organization's partition, and as a hash item in a partition of its own (PK = SK =
// the hash key) for the lookup by the hash of its secret. The helpers below write the two as one.

// hashItemKeys are the keys of a hash item: its own partition, with the hash key as PK and SK.
func hashItemKeys(hashKey, itemType string) itemKeys {
	return itemKeys{PK: hashKey, SK: hashKey, Type: itemType}
}

// hashPairPuts are the puts of an item and its hash item, each only if absent.
func (s *Store) hashPairPuts(item, hashItem any) []*dynamo.Put {
	return []*dynamo.Put{
		s.table.Put(item).If(notExists, attrPK),
		s.table.Put(hashItem).If(notExists, attrPK),
	}
}

// createHashPair writes, in one transaction: a check that the organization exists, then the item
// and its hash item, each only if absent. A taken key is a conflict with message conflict.
func (s *Store) createHashPair(ctx context.Context, op, conflict, orgID string, item, hashItem any) error {
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Check(s.table.Check(attrPK, orgPK(orgID)).Range(attrSK, orgSK).IfExists())
		for _, p := range s.hashPairPuts(item, hashItem) {
			tx.Put(p)
		}
	})
	if at := txFailedAt(err); at != nil {
		if at[0] == 0 {
			return kiln.NotFound("organization")
		}
		return kiln.Errorf(kiln.EConflict, "%s", conflict)
	}
	return wrap(op, err)
}

// deleteHashPair deletes, in one transaction, the item keys (only if it still exists) and its hash
// item; an item deleted meanwhile is not_found for kind.
func (s *Store) deleteHashPair(ctx context.Context, op, kind string, keys itemKeys, hashKey string) error {
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Delete(s.table.Delete(attrPK, keys.PK).Range(attrSK, keys.SK).If(exists, attrPK))
		tx.Delete(s.table.Delete(attrPK, hashKey).Range(attrSK, hashKey))
	})
	if txFailedAt(err) != nil {
		return kiln.NotFound(kind)
	}
	return wrap(op, err)
}

// updateHashPair sets attr to v on the item keys and on its hash item in one transaction, each on
// the condition cond (with args). The error is runTx's, unwrapped, for the caller to translate.
func (s *Store) updateHashPair(ctx context.Context, keys itemKeys, hashKey, attr string, v any, cond string, args ...any) error {
	return s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Update(s.table.Update(attrPK, keys.PK).Range(attrSK, keys.SK).Set(attr, v).If(cond, args...))
		tx.Update(s.table.Update(attrPK, hashKey).Range(attrSK, hashKey).Set(attr, v).If(cond, args...))
	})
}

// touchHashPair sets the time attr to at on the item keys and its hash item, each only if it still
// exists; an item deleted meanwhile is not_found for kind.
func (s *Store) touchHashPair(ctx context.Context, op, kind string, keys itemKeys, hashKey, attr string, at time.Time) error {
	err := s.updateHashPair(ctx, keys, hashKey, attr, toMS(at), exists, attrPK)
	if txFailedAt(err) != nil {
		return kiln.NotFound(kind)
	}
	return wrap(op, err)
}

// credentialItem holds the attributes every credential item has (kiln.Credential), embedded in
// the token, trigger token and agent items.
type credentialItem struct {
	ID             string `dynamo:"id"`
	OrganizationID string `dynamo:"organizationId"`
	Name           string `dynamo:"name"`
	Hash           string `dynamo:"hash"`
	Hint           string `dynamo:"hint"`
	CreatedAt      int64  `dynamo:"createdAt"`
}

func newCredentialItem(c *kiln.Credential) credentialItem {
	return credentialItem{ID: c.ID, OrganizationID: c.OrganizationID, Name: c.Name, Hash: c.Hash, Hint: c.Hint,
		CreatedAt: toMS(c.CreatedAt)}
}

func (it *credentialItem) credential() kiln.Credential {
	return kiln.Credential{ID: it.ID, OrganizationID: it.OrganizationID, Name: it.Name, Hash: it.Hash, Hint: it.Hint,
		CreatedAt: fromMS(it.CreatedAt)}
}
