package dynamostore

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// The scans across organizations each read one GSI4 partition in sort-key order. GSI4 is sparse:
// only queued builds, builds awaiting delivery, scheduled settings, artifacts and pending webhook
// deliveries (webhooks.go) carry its keys. Each partition takes every
// write of its kind from all organizations, which is fine for one machine and modest AWS use (see
// docs/dynamodb.md).

// queued reports whether builds in status s are in the queue partitions of GSI4.
func queued(s kiln.BuildStatus) bool { return s == kiln.StatusPending || s == kiln.StatusRunning }

// QueuedBuilds queries GSI4's partition "QUEUE#<status>" in ascending build id order: oldest
// first, across organizations.
func (s *Store) QueuedBuilds(ctx context.Context, status kiln.BuildStatus, n int) ([]*kiln.Build, error) {
	return s.QueuedBuildsAfter(ctx, status, "", n)
}

// QueuedBuildsAfter queries the same partition for sort keys (build ids) above afterID.
func (s *Store) QueuedBuildsAfter(ctx context.Context, status kiln.BuildStatus, afterID string, n int) ([]*kiln.Build, error) {
	if !queued(status) {
		return nil, kiln.Errorf(kiln.EBadRequest, "only pending and running builds are queued, not %q", status)
	}
	q := listQuery{index: indexGSI4, pkAttr: attrGSI4PK, skAttr: attrGSI4SK, pk: queuePK(status), skAfter: afterID, forward: true}
	return listAll(ctx, s, "queued builds", q, limit(store.Page{Limit: n}), (*buildItem).build)
}

// awaitingDelivery reports whether b is in GSI4's partition "DEPLOY": complete, with its
// delivery pending or under way. No build is both queued and awaiting delivery.
func awaitingDelivery(b *kiln.Build) bool {
	return b.Status == kiln.StatusComplete &&
		(b.AutoDeployStatus == kiln.AutoDeployPending || b.AutoDeployStatus == kiln.AutoDeployDelivering)
}

// ScheduledBuildSettings queries all of GSI4's partition "SCHEDULED", ordered by organization and
// setting id.
func (s *Store) ScheduledBuildSettings(ctx context.Context) ([]*kiln.BuildSetting, error) {
	q := listQuery{index: indexGSI4, pkAttr: attrGSI4PK, skAttr: attrGSI4SK, pk: scheduledPK, forward: true}
	return listAll(ctx, s, "scheduled build settings", q, 0, (*settingItem).setting)
}

// ArtifactsCreatedBefore queries GSI4's partition "ARTIFACTS" for sort keys below t's padded
// milliseconds, ascending: oldest first. An artifact made at t's millisecond sorts after the bare
// prefix ("<ms>#..." > "<ms>"), so it is not before t.
func (s *Store) ArtifactsCreatedBefore(ctx context.Context, t time.Time, n int) ([]*kiln.Artifact, error) {
	q := listQuery{
		index: indexGSI4, pkAttr: attrGSI4PK, skAttr: attrGSI4SK, pk: artifactsPK,
		skBefore: agePrefix(toMS(t)), forward: true,
	}
	return listAll(ctx, s, "artifacts created before", q, limit(store.Page{Limit: n}), (*artifactItem).artifact)
}
