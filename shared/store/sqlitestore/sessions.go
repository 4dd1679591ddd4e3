package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

const sessionCols = `id, user_id, hash, org_id, created_at, expires_at, user_agent, address`

func scanSession(r scanner) (*kiln.Session, error) {
	var ss kiln.Session
	var created, expires int64
	if err := r.Scan(&ss.ID, &ss.UserID, &ss.Hash, &ss.OrganizationID, &created, &expires, &ss.UserAgent, &ss.Address); err != nil {
		return nil, err
	}
	ss.CreatedAt, ss.ExpiresAt = fromMS(created), fromMS(expires)
	return &ss, nil
}

// expiredSessionKept is how long an expired session stays readable (GetSessionByHash answers it
// as expired) before a CreateSession drops it.
const expiredSessionKept = 24 * time.Hour

// CreateSession inserts the session and, in the same transaction, drops every session that
// expired more than expiredSessionKept before it was created.
func (s *Store) CreateSession(ctx context.Context, ss *kiln.Session) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, ms(ss.CreatedAt.Add(-expiredSessionKept))); err != nil {
			return fmt.Errorf("sqlitestore: expire sessions: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			ss.ID, ss.UserID, ss.Hash, ss.OrganizationID, ms(ss.CreatedAt), ms(ss.ExpiresAt), ss.UserAgent, ss.Address); err != nil {
			return writeErr("create session", err, "the session already exists")
		}
		return nil
	})
}

func (s *Store) GetSessionByHash(ctx context.Context, hash string) (*kiln.Session, error) {
	return getOne(ctx, s, "get session", "session", scanSession, `SELECT `+sessionCols+` FROM sessions WHERE hash = ?`, hash)
}

// ListSessions reads the user's sessions unexpired at now, newest first.
func (s *Store) ListSessions(ctx context.Context, userID string, now time.Time) ([]*kiln.Session, error) {
	return scanAll(ctx, s, "list sessions", scanSession,
		`SELECT `+sessionCols+` FROM sessions WHERE user_id = ? AND expires_at > ? ORDER BY created_at DESC, id DESC`,
		userID, ms(now))
}

func (s *Store) SetSessionOrganization(ctx context.Context, userID, sessionID, orgID string) (*kiln.Session, error) {
	var ss *kiln.Session
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET org_id = ? WHERE id = ? AND user_id = ?`, orgID, sessionID, userID)
		if err != nil {
			return fmt.Errorf("sqlitestore: set session organization: %w", err)
		}
		if err := mustChange("set session organization", res, "session"); err != nil {
			return err
		}
		ss, err = scanSession(tx.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, sessionID))
		if err != nil {
			return fmt.Errorf("sqlitestore: set session organization: read back: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ss, nil
}

func (s *Store) DeleteSession(ctx context.Context, userID, sessionID string) error {
	return s.change(ctx, "delete session", "session", `DELETE FROM sessions WHERE id = ? AND user_id = ?`, sessionID, userID)
}
