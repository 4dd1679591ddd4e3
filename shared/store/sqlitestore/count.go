package sqlitestore

import (
	"context"
	"fmt"
)

// CountOrganizations returns how many organizations the store holds: `kiln serve` refuses builds
// without a sandbox on a service that holds several.
func (s *Store) CountOrganizations(ctx context.Context) (int, error) {
	var n int
	if err := s.queryRowContext(ctx, `SELECT COUNT(*) FROM organizations`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count organizations: %w", err)
	}
	return n, nil
}
