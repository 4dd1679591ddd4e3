package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

const hostedHostCols = `id, seen_at, claimed_at, org_id, build_id`

func scanHostedHost(r scanner) (*kiln.HostedHost, error) {
	var h kiln.HostedHost
	var seen int64
	var claimed sql.NullInt64
	if err := r.Scan(&h.ID, &seen, &claimed, &h.OrganizationID, &h.BuildID); err != nil {
		return nil, err
	}
	h.SeenAt, h.ClaimedAt = fromMS(seen), fromOptMS(claimed)
	return &h, nil
}

func (s *Store) GetHostedHost(ctx context.Context, id string) (*kiln.HostedHost, error) {
	return getOne(ctx, s, "get hosted host", "hosted host", scanHostedHost,
		`SELECT `+hostedHostCols+` FROM hosted_hosts WHERE id = ?`, id)
}

// SeeHostedHost inserts the record unless one exists and returns the stored one.
func (s *Store) SeeHostedHost(ctx context.Context, id string, now time.Time) (*kiln.HostedHost, error) {
	if id == "" {
		return nil, kiln.Errorf(kiln.EBadRequest, "a hosted host needs its instance id")
	}
	h, err := scanHostedHost(s.db.QueryRowContext(ctx, `INSERT INTO hosted_hosts (id, seen_at) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET id = id RETURNING `+hostedHostCols, id, ms(now)))
	if err != nil {
		return nil, readErr("see hosted host", err, "hosted host")
	}
	return h, nil
}

// ClaimHostedHost inserts the claimed record, or sets the claim on an unclaimed one; a claimed
// record changes no row, which is conflict.
func (s *Store) ClaimHostedHost(ctx context.Context, h *kiln.HostedHost) error {
	if h.ID == "" || h.ClaimedAt == nil {
		return kiln.Errorf(kiln.EBadRequest, "a hosted host's claim needs its instance id and time")
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO hosted_hosts (`+hostedHostCols+`) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET claimed_at = excluded.claimed_at, org_id = excluded.org_id, build_id = excluded.build_id
		WHERE hosted_hosts.claimed_at IS NULL`,
		h.ID, ms(h.SeenAt), ms(*h.ClaimedAt), h.OrganizationID, h.BuildID)
	if err != nil {
		return writeErr("claim hosted host", err, "the host claimed a build already")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return writeErr("claim hosted host", err, "the host claimed a build already")
	}
	if n == 0 {
		return kiln.Errorf(kiln.EConflict, "the host claimed a build already")
	}
	return nil
}
