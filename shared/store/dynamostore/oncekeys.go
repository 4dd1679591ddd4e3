package dynamostore

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// onceKeyItem records a key used once: PK "ORG#<org>", SK "ONCE#<key>". expiresAt (ms) decides
// whether the key is still taken; ttl (seconds) is the same instant for DynamoDB's time to live,
// where the table has it enabled on that attribute, so expired items go away by themselves.
type onceKeyItem struct {
	itemKeys
	ExpiresAt int64 `dynamo:"expiresAt"`
	TTL       int64 `dynamo:"ttl"`
}

// UseOnce puts the item if there is none or the one there has expired (time to live deletes
// lazily, so the condition also checks expiresAt); a failed condition is conflict.
func (s *Store) UseOnce(ctx context.Context, orgID, key string, now, expires time.Time) error {
	if key == "" {
		return kiln.Errorf(kiln.EBadRequest, "a once key must not be empty")
	}
	it := &onceKeyItem{
		itemKeys:  itemKeys{PK: orgPK(orgID), SK: onceKeySK(key), Type: typeOnceKey},
		ExpiresAt: toMS(expires), TTL: expires.Unix(),
	}
	err := s.table.Put(it).If("attribute_not_exists($) OR $ <= ?", attrPK, "expiresAt", toMS(now)).Run(ctx)
	if isCondFailed(err) {
		return kiln.Errorf(kiln.EConflict, "this key was used already")
	}
	return wrap("use once", err)
}
