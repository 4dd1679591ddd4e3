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

func (s *Store) GetUsage(ctx context.Context, orgID, month string) (*kiln.Usage, error) {
	u := &kiln.Usage{Month: month, Minutes: map[kiln.Platform]int64{}, Skipped: map[kiln.Trigger]int64{}}
	rows, err := s.db.QueryContext(ctx, `SELECT platform, minutes FROM usage_minutes WHERE org_id = ? AND month = ?`, orgID, month)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: get usage: %w", err)
	}
	for rows.Next() {
		var p kiln.Platform
		var n int64
		if err := rows.Scan(&p, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlitestore: get usage: %w", err)
		}
		u.Minutes[p] = n
	}
	rows.Close()
	rows, err = s.db.QueryContext(ctx, `SELECT trigger_kind, skipped FROM usage_skipped WHERE org_id = ? AND month = ?`, orgID, month)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: get usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t kiln.Trigger
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, fmt.Errorf("sqlitestore: get usage: %w", err)
		}
		u.Skipped[t] = n
	}
	return u, rows.Err()
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
