package dynamostore

import (
	"context"
	"slices"
	"strings"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// An organization's usage of a month is one item: PK "ORG#<org>", SK "USAGE#<YYYY-MM>", with a
// number attribute "minutes_<platform>" per platform and "skipped_<trigger>" per trigger, each
// grown with ADD (which creates the item and the attribute when missing). A skipped trigger's key
// is an item "SKIPKEY#<key>" in the organization's partition, put in the same transaction as the
// count only if absent.
const (
	minutesAttrPrefix = "minutes_"
	skippedAttrPrefix = "skipped_"
)

// usageAdd is the update that adds n to attr of the organization's usage of month.
func (s *Store) usageAdd(orgID, month, attr string, n int64) *dynamo.Update {
	return s.table.Update(attrPK, orgPK(orgID)).Range(attrSK, usageSK(month)).Set("type", typeUsage).Add(attr, n)
}

// endBuild runs u, the conditional update that ends b, and adds b's minutes to its
// organization's usage in one transaction: both or neither. failed is true when u's condition
// failed (the caller tells why).
func (s *Store) endBuild(ctx context.Context, b *kiln.Build, u *dynamo.Update) (failed bool, err error) {
	err = s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Update(u)
		tx.Update(s.usageAdd(b.OrganizationID, kiln.UsageMonth(*b.FinishedAt), minutesAttrPrefix+string(b.Platform), b.BuildMinutes))
	})
	if err == nil {
		return false, nil
	}
	if slices.Contains(txFailedAt(err), 0) {
		return true, nil
	}
	return false, wrap("update build", err)
}

func (s *Store) GetUsage(ctx context.Context, orgID, month string) (*kiln.Usage, error) {
	u := &kiln.Usage{Month: month, Minutes: map[kiln.Platform]int64{}, Skipped: map[kiln.Trigger]int64{}}
	var item map[string]any
	err := s.readItem(ctx, orgPK(orgID), usageSK(month), &item)
	if isNotFound(err) {
		return u, nil
	}
	if err != nil {
		return nil, wrap("get usage", err)
	}
	for k, v := range item {
		n, ok := v.(float64)
		if !ok {
			continue
		}
		if p, ok := strings.CutPrefix(k, minutesAttrPrefix); ok {
			u.Minutes[kiln.Platform(p)] = int64(n)
		} else if t, ok := strings.CutPrefix(k, skippedAttrPrefix); ok {
			u.Skipped[kiln.Trigger(t)] = int64(n)
		}
	}
	return u, nil
}

func (s *Store) RecordSkippedTrigger(ctx context.Context, orgID, month string, trigger kiln.Trigger, key string) error {
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Put(s.table.Put(itemKeys{PK: orgPK(orgID), SK: skipKeySK(key), Type: typeSkipKey}).If(notExists, attrPK))
		tx.Update(s.usageAdd(orgID, month, skippedAttrPrefix+string(trigger), 1))
	})
	if slices.Contains(txFailedAt(err), 0) {
		return kiln.Errorf(kiln.EConflict, "this trigger was recorded as skipped before")
	}
	return wrap("record a skipped trigger", err)
}

// ArtifactBytes reads the sizes of the organization's artifact items (their sort keys start
// with "ARTIFACT#") page by page and adds them up.
func (s *Store) ArtifactBytes(ctx context.Context, orgID string) (int64, error) {
	var sizes []struct {
		SizeBytes int64 `dynamo:"sizeBytes"`
	}
	err := s.table.Get(attrPK, orgPK(orgID)).Range(attrSK, dynamo.BeginsWith, prefixArtifact).Project("sizeBytes").All(ctx, &sizes)
	if err != nil {
		return 0, wrap("artifact bytes", err)
	}
	var n int64
	for _, a := range sizes {
		n += a.SizeBytes
	}
	return n, nil
}
