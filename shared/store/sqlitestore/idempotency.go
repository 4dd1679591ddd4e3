package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// CreateBuildOnce records the key and inserts the build in one transaction; if the key is taken,
// it returns the build recorded with it instead and writes nothing. Write transactions begin
// IMMEDIATE, so concurrent calls with the same key run one after another and only the first
// creates.
func (s *Store) CreateBuildOnce(ctx context.Context, b *kiln.Build, key, fingerprint string) (*kiln.Build, string, bool, error) {
	if key == "" {
		return nil, "", false, kiln.Errorf(kiln.EBadRequest, "an idempotency key must not be empty")
	}
	var (
		got      *kiln.Build
		storedFP string
		created  bool
	)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (org_id, key, build_id, fingerprint, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (org_id, key) DO NOTHING`,
			b.OrganizationID, key, b.ID, fingerprint, ms(b.CreatedAt))
		if err != nil {
			return fmt.Errorf("sqlitestore: create build once: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlitestore: create build once: %w", err)
		}
		if n == 1 {
			if err := insertBuild(ctx, tx, b); err != nil {
				return err // the key's row goes with the rolled back transaction
			}
			got, storedFP, created = b, fingerprint, true
			return nil
		}
		var buildID string
		err = tx.QueryRowContext(ctx, `SELECT build_id, fingerprint FROM idempotency_keys WHERE org_id = ? AND key = ?`,
			b.OrganizationID, key).Scan(&buildID, &storedFP)
		if err != nil {
			return fmt.Errorf("sqlitestore: create build once: read key: %w", err)
		}
		got, err = scanBuild(tx.QueryRowContext(ctx, `SELECT `+buildCols+` FROM builds WHERE org_id = ? AND id = ?`,
			b.OrganizationID, buildID))
		if errors.Is(err, sql.ErrNoRows) {
			// The build was written with its key and builds are never deleted: a fault, not a 404.
			return fmt.Errorf("sqlitestore: create build once: idempotency key names missing build %s", buildID)
		}
		if err != nil {
			return fmt.Errorf("sqlitestore: create build once: read build: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, "", false, err
	}
	return got, storedFP, created, nil
}
