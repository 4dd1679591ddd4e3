package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
		return insertFirstToken(ctx, tx, token)
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

// SetMemberRole updates the role in one transaction that first counts the other owners when an
// owner is demoted (writers are serialized, so two demotions cannot both see the other).
func (s *Store) SetMemberRole(ctx context.Context, orgID, userID string, role kiln.Role) (*kiln.Member, error) {
	var m *kiln.Member
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if m, err = memberForChange(ctx, tx, orgID, userID, role != kiln.RoleOwner); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE members SET role = ? WHERE org_id = ? AND user_id = ?`, role, orgID, userID); err != nil {
			return fmt.Errorf("sqlitestore: set member role: %w", err)
		}
		m.Role = role
		return nil
	})
	return m, err
}

// RemoveMember deletes the membership and the member's tokens in one transaction.
func (s *Store) RemoveMember(ctx context.Context, orgID, userID string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := memberForChange(ctx, tx, orgID, userID, true); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE org_id = ? AND user_id = ?`, orgID, userID); err != nil {
			return fmt.Errorf("sqlitestore: remove member's tokens: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM members WHERE org_id = ? AND user_id = ?`, orgID, userID); err != nil {
			return fmt.Errorf("sqlitestore: remove member: %w", err)
		}
		return nil
	})
}

// memberForChange reads the member in tx; when the change takes away their ownership (losing)
// and they are an owner, another owner must remain.
func memberForChange(ctx context.Context, tx *sql.Tx, orgID, userID string, losing bool) (*kiln.Member, error) {
	m, err := scanMember(tx.QueryRowContext(ctx, `SELECT `+memberCols+` FROM members WHERE org_id = ? AND user_id = ?`, orgID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kiln.NotFound("member")
	}
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: get member: %w", err)
	}
	if !losing || m.Role != kiln.RoleOwner {
		return m, nil
	}
	var owners int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM members WHERE org_id = ? AND role = ?`, orgID, kiln.RoleOwner).Scan(&owners); err != nil {
		return nil, fmt.Errorf("sqlitestore: count owners: %w", err)
	}
	if owners < 2 {
		return nil, kiln.ErrLastOwner()
	}
	return m, nil
}
