package dynamostore

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// triggerTokenItem is a Perforce trigger token, stored twice with the same attributes, as API
// tokens are: in the organization's partition (PK "ORG#<org>", SK "TRIGGERTOKEN#<id>") and in its
// own partition for the lookup by hash (PK = SK = "TRIGGERTOKENHASH#<sha256>").
type triggerTokenItem struct {
	itemKeys
	credentialItem
	CreatedBy  string `dynamo:"createdBy"`
	LastUsedAt *int64 `dynamo:"lastUsedAt,omitempty"`
}

func newTriggerTokenItem(t *kiln.TriggerToken, keys itemKeys) *triggerTokenItem {
	return &triggerTokenItem{
		itemKeys: keys, credentialItem: newCredentialItem(&t.Credential),
		CreatedBy: t.CreatedBy, LastUsedAt: toMSPtr(t.LastUsedAt),
	}
}

func (it *triggerTokenItem) triggerToken() *kiln.TriggerToken {
	return &kiln.TriggerToken{
		Credential: it.credential(), CreatedBy: it.CreatedBy, LastUsedAt: fromMSPtr(it.LastUsedAt),
	}
}

// CreateTriggerToken writes, in one transaction: a check that the organization exists, then the
// token and its hash item, each only if absent.
func (s *Store) CreateTriggerToken(ctx context.Context, t *kiln.TriggerToken) error {
	return s.createHashPair(ctx, "create trigger token", "the trigger token already exists", t.OrganizationID,
		newTriggerTokenItem(t, itemKeys{PK: orgPK(t.OrganizationID), SK: triggerTokenSK(t.ID), Type: typeTrigger}),
		newTriggerTokenItem(t, hashItemKeys(triggerTokenHashKey(t.Hash), typeTriggerHash)))
}

// GetTriggerTokenByHash is one GetItem on "TRIGGERTOKENHASH#<hash>".
func (s *Store) GetTriggerTokenByHash(ctx context.Context, hash string) (*kiln.TriggerToken, error) {
	return get(ctx, s, "get trigger token by hash", "trigger token", triggerTokenHashKey(hash), triggerTokenHashKey(hash), (*triggerTokenItem).triggerToken)
}

// ListTriggerTokens queries the organization's partition for SK begins_with "TRIGGERTOKEN#",
// newest first.
func (s *Store) ListTriggerTokens(ctx context.Context, orgID string, p store.Page) ([]*kiln.TriggerToken, string, error) {
	q := orgPageQuery(orgID, prefixTrigger, p.After, triggerTokenSK(p.After))
	return list(ctx, s, "list trigger tokens", q, limit(p), func(it *triggerTokenItem) string { return it.ID }, (*triggerTokenItem).triggerToken)
}

// getTriggerToken reads the token in the organization's partition (for its hash).
func (s *Store) getTriggerToken(ctx context.Context, op, orgID, id string) (*triggerTokenItem, error) {
	return getItem[triggerTokenItem](ctx, s, op, "trigger token", orgPK(orgID), triggerTokenSK(id))
}

// DeleteTriggerToken reads the token (for its hash), then deletes the token item (if it still
// exists) and its hash item in one transaction.
func (s *Store) DeleteTriggerToken(ctx context.Context, orgID, id string) error {
	it, err := s.getTriggerToken(ctx, "delete trigger token", orgID, id)
	if err != nil {
		return err
	}
	return s.deleteHashPair(ctx, "delete trigger token", "trigger token", it.itemKeys, triggerTokenHashKey(it.Hash))
}

// TouchTriggerToken reads the token (for its hash), then sets lastUsedAt on the token item and its
// hash item in one transaction, each only if it still exists.
func (s *Store) TouchTriggerToken(ctx context.Context, orgID, id string, at time.Time) error {
	it, err := s.getTriggerToken(ctx, "touch trigger token", orgID, id)
	if err != nil {
		return err
	}
	return s.touchHashPair(ctx, "touch trigger token", "trigger token", it.itemKeys, triggerTokenHashKey(it.Hash), "lastUsedAt", at)
}
