package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

const triggerTokenCols = credentialCols + `, created_by, last_used_at`

func scanTriggerToken(r scanner) (*kiln.TriggerToken, error) {
	var t kiln.TriggerToken
	var lastUsed sql.NullInt64
	if err := scanCredential(r, &t.Credential, &t.CreatedBy, &lastUsed); err != nil {
		return nil, err
	}
	t.LastUsedAt = fromOptMS(lastUsed)
	return &t, nil
}

// CreateTriggerToken inserts the token; like CreateToken it does not check the organization.
func (s *Store) CreateTriggerToken(ctx context.Context, t *kiln.TriggerToken) error {
	return s.insertInOrg(ctx, "create trigger token", "the trigger token already exists",
		`INSERT INTO trigger_tokens (`+triggerTokenCols+`) SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE `+orgExists, t.OrganizationID,
		credentialArgs(&t.Credential, t.CreatedBy, optMS(t.LastUsedAt))...)
}

func (s *Store) GetTriggerTokenByHash(ctx context.Context, hash string) (*kiln.TriggerToken, error) {
	return getOne(ctx, s, "get trigger token", "trigger token", scanTriggerToken,
		`SELECT `+triggerTokenCols+` FROM trigger_tokens WHERE hash = ?`, hash)
}

func (s *Store) ListTriggerTokens(ctx context.Context, orgID string, p store.Page) ([]*kiln.TriggerToken, string, error) {
	return list(ctx, s, "list trigger tokens", triggerTokenCols, "trigger_tokens", "id", inOrg(orgID), p, scanTriggerToken,
		func(t *kiln.TriggerToken) string { return t.ID })
}

func (s *Store) DeleteTriggerToken(ctx context.Context, orgID, id string) error {
	return s.change(ctx, "delete trigger token", "trigger token",
		`DELETE FROM trigger_tokens WHERE org_id = ? AND id = ?`, orgID, id)
}

func (s *Store) TouchTriggerToken(ctx context.Context, orgID, id string, at time.Time) error {
	return s.change(ctx, "touch trigger token", "trigger token",
		`UPDATE trigger_tokens SET last_used_at = ? WHERE org_id = ? AND id = ?`, ms(at), orgID, id)
}
