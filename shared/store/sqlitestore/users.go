package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
)

const githubUserCols = `user_id, github_id, email, name, login, created_at`

func scanGitHubUser(r scanner) (*kiln.GitHubUser, error) {
	var u kiln.GitHubUser
	var created int64
	if err := r.Scan(&u.ID, &u.GitHubID, &u.Email, &u.Name, &u.Login, &created); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMS(created)
	return &u, nil
}

// SignInGitHubUser, in one transaction (writers are serialized, so two first sign-ins of one
// GitHub user make one row), updates the row of u.GitHubID or inserts u.
func (s *Store) SignInGitHubUser(ctx context.Context, u *kiln.GitHubUser) (*kiln.GitHubUser, error) {
	const op = "sign in GitHub user"
	var stored *kiln.GitHubUser
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE github_users SET email = ?, name = ?, login = ? WHERE github_id = ?`,
			u.Email, u.Name, u.Login, u.GitHubID)
		if err != nil {
			return fmt.Errorf("sqlitestore: %s: %w", op, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlitestore: %s: %w", op, err)
		} else if n == 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO github_users (`+githubUserCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
				u.ID, u.GitHubID, u.Email, u.Name, u.Login, ms(u.CreatedAt)); err != nil {
				return writeErr(op, err, "the user id is already taken")
			}
		}
		stored, err = scanGitHubUser(tx.QueryRowContext(ctx, `SELECT `+githubUserCols+` FROM github_users WHERE github_id = ?`, u.GitHubID))
		if err != nil {
			return fmt.Errorf("sqlitestore: %s: read back: %w", op, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return stored, nil
}

func (s *Store) GetGitHubUser(ctx context.Context, userID string) (*kiln.GitHubUser, error) {
	return getOne(ctx, s, "get GitHub user", "user", scanGitHubUser,
		`SELECT `+githubUserCols+` FROM github_users WHERE user_id = ?`, userID)
}

// ListMemberships reads the user's rows of members in every organization, oldest first.
func (s *Store) ListMemberships(ctx context.Context, userID string) ([]*kiln.Member, error) {
	return scanAll(ctx, s, "list memberships", scanMember,
		`SELECT `+memberCols+` FROM members WHERE user_id = ? ORDER BY created_at, org_id`, userID)
}
