package sqlitestore

import (
	"context"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// The scans across organizations, each on an index of its own (migrations 0004 and 0005).

// scanLimit reads a scan's limit as store.Page reads its own: outside 1..MaxLimit it is MaxLimit.
func scanLimit(n int) int {
	if n < 1 || n > store.MaxLimit {
		return store.MaxLimit
	}
	return n
}

// QueuedBuilds reads builds in a status by ascending id (index builds_queue): oldest first.
func (s *Store) QueuedBuilds(ctx context.Context, status kiln.BuildStatus, n int) ([]*kiln.Build, error) {
	return s.QueuedBuildsAfter(ctx, status, "", n)
}

// QueuedBuildsAfter reads builds in a status with ids above afterID, by ascending id.
func (s *Store) QueuedBuildsAfter(ctx context.Context, status kiln.BuildStatus, afterID string, n int) ([]*kiln.Build, error) {
	if status != kiln.StatusPending && status != kiln.StatusRunning {
		return nil, kiln.Errorf(kiln.EBadRequest, "only pending and running builds are queued, not %q", status)
	}
	return scanAll(ctx, s, "queued builds", scanBuild, `SELECT `+buildCols+` FROM builds
		WHERE status = ? AND id > ? ORDER BY id, org_id LIMIT ?`, status, afterID, scanLimit(n))
}

// ScheduledBuildSettings reads the scheduled settings by organization and id (partial index
// build_settings_scheduled, which the literal 'scheduled' selects).
func (s *Store) ScheduledBuildSettings(ctx context.Context) ([]*kiln.BuildSetting, error) {
	return scanAll(ctx, s, "scheduled build settings", scanSetting, `SELECT `+settingCols+` FROM build_settings
		WHERE trigger = 'scheduled' ORDER BY org_id, id`)
}

// ArtifactsCreatedBefore reads artifacts by creation time (index artifacts_by_age): oldest first.
func (s *Store) ArtifactsCreatedBefore(ctx context.Context, t time.Time, n int) ([]*kiln.Artifact, error) {
	return scanAll(ctx, s, "artifacts created before", scanArtifact, `SELECT `+artifactCols+` FROM artifacts
		WHERE created_at < ? ORDER BY created_at, org_id, build_id LIMIT ?`, ms(t), scanLimit(n))
}

// scanAll runs a read query and scans every row.
func scanAll[T any](ctx context.Context, s *Store, op string, scan func(scanner) (*T, error), text string, args ...any) ([]*T, error) {
	rows, err := s.queryContext(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	defer rows.Close()
	var out []*T
	for rows.Next() {
		it, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: %s: %w", op, err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	return out, nil
}
