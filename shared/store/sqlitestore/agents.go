package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

const agentCols = credentialCols + `, pool, revoked_at, last_seen_at`

func scanAgent(r scanner) (*kiln.Agent, error) {
	var a kiln.Agent
	var revoked, seen sql.NullInt64
	if err := scanCredential(r, &a.Credential, &a.Pool, &revoked, &seen); err != nil {
		return nil, err
	}
	a.RevokedAt, a.LastSeenAt = fromOptMS(revoked), fromOptMS(seen)
	return &a, nil
}

// CreateAgent inserts the agent; like CreateToken it does not check the organization.
func (s *Store) CreateAgent(ctx context.Context, a *kiln.Agent) error {
	return s.insertInOrg(ctx, "create agent", "the agent already exists",
		`INSERT INTO agents (`+agentCols+`) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE `+orgExists, a.OrganizationID,
		credentialArgs(&a.Credential, a.Pool, optMS(a.RevokedAt), optMS(a.LastSeenAt))...)
}

func (s *Store) GetAgentByHash(ctx context.Context, hash string) (*kiln.Agent, error) {
	return getOne(ctx, s, "get agent", "agent", scanAgent, `SELECT `+agentCols+` FROM agents WHERE hash = ?`, hash)
}

func (s *Store) GetAgent(ctx context.Context, orgID, id string) (*kiln.Agent, error) {
	return getOne(ctx, s, "get agent", "agent", scanAgent,
		`SELECT `+agentCols+` FROM agents WHERE org_id = ? AND id = ?`, orgID, id)
}

func (s *Store) ListAgents(ctx context.Context, orgID string, p store.Page) ([]*kiln.Agent, string, error) {
	return list(ctx, s, "list agents", agentCols, "agents", "id", inOrg(orgID), p, scanAgent,
		func(a *kiln.Agent) string { return a.ID })
}

func (s *Store) RevokeAgent(ctx context.Context, orgID, id string, at time.Time) (*kiln.Agent, error) {
	a, err := scanAgent(s.db.QueryRowContext(ctx, `UPDATE agents SET revoked_at = coalesce(revoked_at, ?)
		WHERE org_id = ? AND id = ? RETURNING `+agentCols, ms(at), orgID, id))
	if err != nil {
		return nil, readErr("revoke agent", err, "agent")
	}
	return a, nil
}

func (s *Store) TouchAgent(ctx context.Context, orgID, id string, at time.Time) error {
	return s.change(ctx, "touch agent", "agent",
		`UPDATE agents SET last_seen_at = ? WHERE org_id = ? AND id = ?`, ms(at), orgID, id)
}
