package store

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Usage keeps what organizations used, per calendar month (UTC, "YYYY-MM"). Build minutes are
// not written here: UpdateBuild adds a build's minutes in the same atomic write that ends it
// (see MetersEnd), so a build is counted exactly once, in the month it ended.
type Usage interface {
	// GetUsage reads the organization's usage of month; a month without any is empty, never
	// not_found.
	GetUsage(ctx context.Context, orgID, month string) (*kiln.Usage, error)
	// RecordSkippedTrigger counts a trigger skipped for the plan in month, once per key, in one
	// atomic write: a key recorded before is conflict and nothing is counted (a redelivered push,
	// a scheduler that fires the same slot again).
	RecordSkippedTrigger(ctx context.Context, orgID, month string, trigger kiln.Trigger, key string) error
	// ArtifactBytes adds up the sizes of the organization's artifacts.
	ArtifactBytes(ctx context.Context, orgID string) (int64, error)
}

// MetersEnd reports whether UpdateBuild's write of b from status expected ends the build with
// build minutes to count: those are added to b's organization's usage of the month b finished
// in, under b's platform, in the same atomic write as the status.
func MetersEnd(b *kiln.Build, expected kiln.BuildStatus) bool {
	return !expected.Terminal() && b.Status.Terminal() && b.BuildMinutes > 0 && b.FinishedAt != nil
}
