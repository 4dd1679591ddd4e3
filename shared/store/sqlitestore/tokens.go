package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

const tokenCols = credentialCols + `, user_id, expires_at, last_used_at, parent_id`

func scanToken(r scanner) (*kiln.Token, error) {
	var t kiln.Token
	var expires, lastUsed sql.NullInt64
	if err := scanCredential(r, &t.Credential, &t.UserID, &expires, &lastUsed, &t.ParentID); err != nil {
		return nil, err
	}
	t.ExpiresAt, t.LastUsedAt = fromOptMS(expires), fromOptMS(lastUsed)
	return &t, nil
}

// execer is a *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// insertFirstToken adds a new member's first token in tx, if they get one: a member made in the
// console (a GitHub user) has none.
func insertFirstToken(ctx context.Context, tx *sql.Tx, t *kiln.Token) error {
	if t == nil {
		return nil
	}
	return insertToken(ctx, tx, t)
}

func insertToken(ctx context.Context, db execer, t *kiln.Token) error {
	// A token with a parent is written only while the parent exists, so none outlives a
	// revocation of its parent that ran at the same time.
	// Nor is one written for an organization that is not there.
	res, err := db.ExecContext(ctx, `INSERT INTO tokens (`+tokenCols+`)
		SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
		WHERE `+orgExists+` AND (? = '' OR EXISTS (SELECT 1 FROM tokens WHERE org_id = ? AND user_id = ? AND id = ?))`,
		append(credentialArgs(&t.Credential, t.UserID, optMS(t.ExpiresAt), optMS(t.LastUsedAt), t.ParentID),
			t.OrganizationID, t.ParentID, t.OrganizationID, t.UserID, t.ParentID)...)
	if err != nil {
		return writeErr("create token", err, "the token already exists")
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return notWritten(ctx, db, "create token", t.OrganizationID, kiln.NotFound("parent token"))
	}
	return nil
}

func (s *Store) CreateToken(ctx context.Context, t *kiln.Token) error {
	return insertToken(ctx, s.db, t)
}

func (s *Store) GetTokenByHash(ctx context.Context, hash string) (*kiln.Token, error) {
	return getOne(ctx, s, "get token", "token", scanToken, `SELECT `+tokenCols+` FROM tokens WHERE hash = ?`, hash)
}

func (s *Store) ListTokens(ctx context.Context, orgID, userID string, p store.Page) ([]*kiln.Token, string, error) {
	q := inOrg(orgID)
	q.where("user_id = ?", userID)
	return list(ctx, s, "list tokens", tokenCols, "tokens", "id", q, p, scanToken,
		func(t *kiln.Token) string { return t.ID })
}

// DeleteToken deletes the token and its descendants (the tokens created with it, and theirs) in
// one statement.
func (s *Store) DeleteToken(ctx context.Context, orgID, userID, tokenID string) error {
	return s.change(ctx, "delete token", "token", `WITH RECURSIVE doomed(id) AS (
			SELECT id FROM tokens WHERE org_id = ? AND user_id = ? AND id = ?
			UNION SELECT t.id FROM tokens t JOIN doomed d ON t.parent_id = d.id WHERE t.org_id = ? AND t.user_id = ?)
		DELETE FROM tokens WHERE org_id = ? AND user_id = ? AND id IN (SELECT id FROM doomed)`,
		orgID, userID, tokenID, orgID, userID, orgID, userID)
}
