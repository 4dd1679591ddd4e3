package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// addMinutes adds an ending build's minutes to its organization's usage of the month it ended
// in, inside the transaction that ends it.
func addMinutes(ctx context.Context, tx *sql.Tx, b *kiln.Build) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO usage_minutes (org_id, month, platform, minutes) VALUES (?, ?, ?, ?)
		ON CONFLICT (org_id, month, platform) DO UPDATE SET minutes = minutes + excluded.minutes`,
		b.OrganizationID, kiln.UsageMonth(*b.FinishedAt), b.Platform, b.BuildMinutes)
	if err != nil {
		return fmt.Errorf("sqlitestore: update build: meter its minutes: %w", err)
	}
	return nil
}

// usageCount is one row of a usage table: a platform's minutes or a trigger's skips.
type usageCount struct {
	key string
	n   int64
}

func scanUsageCount(r scanner) (*usageCount, error) {
	var c usageCount
	if err := r.Scan(&c.key, &c.n); err != nil {
		return nil, err
	}
	return &c, nil
}

func (s *Store) GetUsage(ctx context.Context, orgID, month string) (*kiln.Usage, error) {
	u := &kiln.Usage{Month: month, Minutes: map[kiln.Platform]int64{}, Skipped: map[kiln.Trigger]int64{}}
	minutes, err := scanAll(ctx, s, "get usage", scanUsageCount,
		`SELECT platform, minutes FROM usage_minutes WHERE org_id = ? AND month = ?`, orgID, month)
	if err != nil {
		return nil, err
	}
	for _, c := range minutes {
		u.Minutes[kiln.Platform(c.key)] = c.n
	}
	skipped, err := scanAll(ctx, s, "get usage", scanUsageCount,
		`SELECT trigger_kind, skipped FROM usage_skipped WHERE org_id = ? AND month = ?`, orgID, month)
	if err != nil {
		return nil, err
	}
	for _, c := range skipped {
		u.Skipped[kiln.Trigger(c.key)] = c.n
	}
	return u, nil
}

func (s *Store) RecordSkippedTrigger(ctx context.Context, orgID, month string, trigger kiln.Trigger, key string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO usage_skip_keys (org_id, key) VALUES (?, ?)`, orgID, key); err != nil {
			return writeErr("record a skipped trigger", err, "this trigger was recorded as skipped before")
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO usage_skipped (org_id, month, trigger_kind, skipped) VALUES (?, ?, ?, 1)
			ON CONFLICT (org_id, month, trigger_kind) DO UPDATE SET skipped = skipped + 1`, orgID, month, trigger)
		if err != nil {
			return fmt.Errorf("sqlitestore: record a skipped trigger: %w", err)
		}
		return nil
	})
}

func (s *Store) ArtifactBytes(ctx context.Context, orgID string) (int64, error) {
	var n int64
	if err := s.queryRowContext(ctx, `SELECT COALESCE(SUM(size_bytes), 0) FROM artifacts WHERE org_id = ?`, orgID).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlitestore: artifact bytes: %w", err)
	}
	return n, nil
}
