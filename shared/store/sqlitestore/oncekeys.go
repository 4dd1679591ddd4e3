package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// UseOnce records the key in one transaction that first forgets the organization's expired
// keys; a key still recorded is conflict.
func (s *Store) UseOnce(ctx context.Context, orgID, key string, now, expires time.Time) error {
	if key == "" {
		return kiln.Errorf(kiln.EBadRequest, "a once key must not be empty")
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM once_keys WHERE org_id = ? AND expires_at <= ?`, orgID, ms(now)); err != nil {
			return fmt.Errorf("sqlitestore: use once: forget expired keys: %w", err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO once_keys (org_id, key, expires_at) VALUES (?, ?, ?)
			ON CONFLICT (org_id, key) DO NOTHING`, orgID, key, ms(expires))
		if err != nil {
			return fmt.Errorf("sqlitestore: use once: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlitestore: use once: %w", err)
		}
		if n == 0 {
			return kiln.Errorf(kiln.EConflict, "this key was used already")
		}
		return nil
	})
}
