package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// credentialCols are the columns every credential table (tokens, trigger_tokens, agents) has for
// kiln.Credential; each credential's column list starts with them.
const credentialCols = `org_id, id, name, hash, hint, created_at`

// scanCredential scans a row of credentialCols and then more columns: the credential's into c, the
// others into rest.
func scanCredential(r scanner, c *kiln.Credential, rest ...any) error {
	var created int64
	if err := r.Scan(append([]any{&c.OrganizationID, &c.ID, &c.Name, &c.Hash, &c.Hint, &created}, rest...)...); err != nil {
		return err
	}
	c.CreatedAt = fromMS(created)
	return nil
}

// credentialArgs are the values of credentialCols for c, followed by rest.
func credentialArgs(c *kiln.Credential, rest ...any) []any {
	return append([]any{c.OrganizationID, c.ID, c.Name, c.Hash, c.Hint, ms(c.CreatedAt)}, rest...)
}

// orgExists is the condition, with the organization's id as its argument, under which a
// credential is written: its organization exists.
const orgExists = `EXISTS (SELECT 1 FROM organizations WHERE id = ?)`

// insertInOrg runs an INSERT ... SELECT ... WHERE orgExists whose last argument is orgID: a
// taken id or hash is conflict, an organization that does not exist is not_found.
func (s *Store) insertInOrg(ctx context.Context, op, conflict, text, orgID string, args ...any) error {
	res, err := s.db.ExecContext(ctx, text, append(args, orgID)...)
	if err != nil {
		return writeErr(op, err, conflict)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return notWritten(ctx, s.db, op, orgID, kiln.NotFound("organization"))
	}
	return nil
}

// notWritten is why an insert guarded by orgExists (and maybe more) wrote nothing: the
// organization is not there, else otherwise.
func notWritten(ctx context.Context, db execer, op, orgID string, otherwise error) error {
	var one int
	err := db.QueryRowContext(ctx, `SELECT 1 FROM organizations WHERE id = ?`, orgID).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return kiln.NotFound("organization")
	case err != nil:
		return fmt.Errorf("sqlitestore: %s: %w", op, err)
	}
	return otherwise
}
