package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// idempotencyItem records the build created under an idempotency key of an organization:
// PK "ORG#<org>", SK "IDEM#<key>". It is written in the same transaction as the build and never
// changes.
type idempotencyItem struct {
	itemKeys
	Key         string `dynamo:"idempotencyKey"`
	BuildID     string `dynamo:"buildId"`
	Fingerprint string `dynamo:"fingerprint,omitempty"`
	CreatedAt   int64  `dynamo:"createdAt"`
}

// CreateBuildOnce writes, in one transaction, the idempotency item [0] and the build [1], each
// only if absent. If the key was taken ([0] failed), it reads the item and the build it names and
// returns them with created false; a build id already taken ([1] alone) is conflict.
func (s *Store) CreateBuildOnce(ctx context.Context, b *kiln.Build, key, fingerprint string) (*kiln.Build, string, bool, error) {
	if key == "" {
		return nil, "", false, kiln.Errorf(kiln.EBadRequest, "an idempotency key must not be empty")
	}
	// A repeat of a request finds its key without taking a number; a repeat racing the first
	// request may take one that its failed transaction then skips.
	var stored idempotencyItem
	err := s.readItem(ctx, orgPK(b.OrganizationID), idempotencySK(key), &stored)
	if err == nil {
		return s.buildOfKey(ctx, b.OrganizationID, &stored)
	}
	if !errors.Is(err, dynamo.ErrNotFound) {
		return nil, "", false, wrap("create build once: read idempotency key", err)
	}
	if err := s.takeBuildNumber(ctx, b); err != nil {
		return nil, "", false, err
	}
	idem := &idempotencyItem{
		itemKeys: itemKeys{PK: orgPK(b.OrganizationID), SK: idempotencySK(key), Type: typeIdempotency},
		Key:      key, BuildID: b.ID, Fingerprint: fingerprint, CreatedAt: toMS(b.CreatedAt),
	}
	err = s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Put(s.table.Put(idem).If(notExists, attrPK))
		tx.Put(s.table.Put(newBuildItem(b)).If(notExists, attrPK))
	})
	if err == nil {
		return b, fingerprint, true, nil
	}
	at := txFailedAt(err)
	if at == nil {
		return nil, "", false, wrap("create build once", err)
	}
	if at[0] != 0 {
		return nil, "", false, kiln.Errorf(kiln.EConflict, "build %s already exists", b.ID)
	}
	err = s.readItem(ctx, orgPK(b.OrganizationID), idempotencySK(key), &stored)
	if err != nil {
		return nil, "", false, wrap("create build once: read idempotency key", err)
	}
	return s.buildOfKey(ctx, b.OrganizationID, &stored)
}

// buildOfKey reads the build an idempotency key was recorded with.
func (s *Store) buildOfKey(ctx context.Context, orgID string, stored *idempotencyItem) (*kiln.Build, string, bool, error) {
	got, err := s.GetBuild(ctx, orgID, stored.BuildID)
	if kiln.IsCode(err, kiln.ENotFound) {
		// The build was written with its key and builds are never deleted: a fault, not a 404.
		return nil, "", false, fmt.Errorf("dynamostore: create build once: idempotency key names missing build %s", stored.BuildID)
	}
	if err != nil {
		return nil, "", false, wrap("create build once: read build", err)
	}
	return got, stored.Fingerprint, false, nil
}
