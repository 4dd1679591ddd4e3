package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

const memberCols = `org_id, user_id, email, name, role, user_created_at, created_at`

func scanMember(r scanner) (*kiln.Member, error) {
	var m kiln.Member
	var userCreated, created int64
	if err := r.Scan(&m.OrganizationID, &m.User.ID, &m.User.Email, &m.User.Name, &m.Role, &userCreated, &created); err != nil {
		return nil, err
	}
	m.User.CreatedAt, m.CreatedAt = fromMS(userCreated), fromMS(created)
	return &m, nil
}

// insertMember adds m in tx; an email taken in the organization is a conflict.
func insertMember(ctx context.Context, tx *sql.Tx, m *kiln.Member) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO members (`+memberCols+`, email_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		m.OrganizationID, m.User.ID, m.User.Email, m.User.Name, m.Role, ms(m.User.CreatedAt), ms(m.CreatedAt),
		kiln.NormalizeEmail(m.User.Email))
	if err != nil {
		return writeErr("create member", err, "a member with this email already exists in the organization")
	}
	return nil
}

func (s *Store) CreateMember(ctx context.Context, m *kiln.Member, token *kiln.Token) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := insertMember(ctx, tx, m); err != nil {
			return err
		}
		return insertToken(ctx, tx, token)
	})
}

func (s *Store) GetMember(ctx context.Context, orgID, userID string) (*kiln.Member, error) {
	return getOne(ctx, s, "get member", "member", scanMember,
		`SELECT `+memberCols+` FROM members WHERE org_id = ? AND user_id = ?`, orgID, userID)
}

func (s *Store) ListMembers(ctx context.Context, orgID string, p store.Page) ([]*kiln.Member, string, error) {
	return list(ctx, s, "list members", memberCols, "members", "user_id", inOrg(orgID), p, scanMember,
		func(m *kiln.Member) string { return m.User.ID })
}
