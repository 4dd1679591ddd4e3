package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

const triggerTokenCols = `org_id, id, name, hash, hint, created_by, created_at, last_used_at`

func scanTriggerToken(r scanner) (*kiln.TriggerToken, error) {
	var t kiln.TriggerToken
	var created int64
	var lastUsed sql.NullInt64
	if err := r.Scan(&t.OrganizationID, &t.ID, &t.Name, &t.Hash, &t.Hint, &t.CreatedBy, &created, &lastUsed); err != nil {
		return nil, err
	}
	t.CreatedAt, t.LastUsedAt = fromMS(created), fromOptMS(lastUsed)
	return &t, nil
}

// CreateTriggerToken inserts the token; like CreateToken it does not check the organization.
func (s *Store) CreateTriggerToken(ctx context.Context, t *kiln.TriggerToken) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO trigger_tokens (`+triggerTokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.OrganizationID, t.ID, t.Name, t.Hash, t.Hint, t.CreatedBy, ms(t.CreatedAt), optMS(t.LastUsedAt))
	if err != nil {
		return writeErr("create trigger token", err, "the trigger token already exists")
	}
	return nil
}

func (s *Store) GetTriggerTokenByHash(ctx context.Context, hash string) (*kiln.TriggerToken, error) {
	t, err := scanTriggerToken(s.queryRowContext(ctx, `SELECT `+triggerTokenCols+` FROM trigger_tokens WHERE hash = ?`, hash))
	if err != nil {
		return nil, readErr("get trigger token", err, "trigger token")
	}
	return t, nil
}

func (s *Store) ListTriggerTokens(ctx context.Context, orgID string, p store.Page) ([]*kiln.TriggerToken, string, error) {
	var q query
	q.where("org_id = ?", orgID)
	return list(ctx, s, "list trigger tokens", triggerTokenCols, "trigger_tokens", "id", q, p, scanTriggerToken,
		func(t *kiln.TriggerToken) string { return t.ID })
}

func (s *Store) DeleteTriggerToken(ctx context.Context, orgID, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM trigger_tokens WHERE org_id = ? AND id = ?`, orgID, id)
	if err != nil {
		return fmt.Errorf("sqlitestore: delete trigger token: %w", err)
	}
	return mustChange("delete trigger token", res, "trigger token")
}

func (s *Store) TouchTriggerToken(ctx context.Context, orgID, id string, at time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE trigger_tokens SET last_used_at = ? WHERE org_id = ? AND id = ?`, ms(at), orgID, id)
	if err != nil {
		return fmt.Errorf("sqlitestore: touch trigger token: %w", err)
	}
	return mustChange("touch trigger token", res, "trigger token")
}
