package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

const invitationCols = `org_id, id, email, role, hash, invited_by_id, invited_by_name, created_at, expires_at`

func scanInvitation(r scanner) (*kiln.Invitation, error) {
	var inv kiln.Invitation
	var created, expires int64
	if err := r.Scan(&inv.OrganizationID, &inv.ID, &inv.Email, &inv.Role, &inv.Hash, &inv.InvitedByID,
		&inv.InvitedByName, &created, &expires); err != nil {
		return nil, err
	}
	inv.CreatedAt, inv.ExpiresAt = fromMS(created), fromMS(expires)
	return &inv, nil
}

// CreateInvitation, in one transaction, checks the organization and that no member has the
// email, removes the organization's invitation for the email, and inserts the new one.
func (s *Store) CreateInvitation(ctx context.Context, inv *kiln.Invitation) error {
	const op = "create invitation"
	key := kiln.NormalizeEmail(inv.Email)
	return s.tx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM organizations WHERE id = ?`, inv.OrganizationID).Scan(&one)
		if err != nil {
			return readErr(op, err, "organization")
		}
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM members WHERE org_id = ? AND email_key = ?`, inv.OrganizationID, key).Scan(&one)
		switch {
		case err == nil:
			return kiln.Errorf(kiln.EConflict, "a member with this email already exists in the organization")
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlitestore: %s: %w", op, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM invitations WHERE org_id = ? AND email_key = ?`, inv.OrganizationID, key); err != nil {
			return fmt.Errorf("sqlitestore: %s: replace: %w", op, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO invitations (`+invitationCols+`, email_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			inv.OrganizationID, inv.ID, inv.Email, inv.Role, inv.Hash, inv.InvitedByID, inv.InvitedByName,
			ms(inv.CreatedAt), ms(inv.ExpiresAt), key)
		if err != nil {
			return writeErr(op, err, "the invitation already exists")
		}
		return nil
	})
}

func (s *Store) GetInvitationByHash(ctx context.Context, hash string) (*kiln.Invitation, error) {
	return getOne(ctx, s, "get invitation", "invitation", scanInvitation,
		`SELECT `+invitationCols+` FROM invitations WHERE hash = ?`, hash)
}

func (s *Store) ListInvitations(ctx context.Context, orgID string, p store.Page) ([]*kiln.Invitation, string, error) {
	return list(ctx, s, "list invitations", invitationCols, "invitations", "id", inOrg(orgID), p, scanInvitation,
		func(inv *kiln.Invitation) string { return inv.ID })
}

func (s *Store) DeleteInvitation(ctx context.Context, orgID, id string) error {
	return s.change(ctx, "delete invitation", "invitation", `DELETE FROM invitations WHERE org_id = ? AND id = ?`, orgID, id)
}

// AcceptInvitation deletes the invitation, if it is still there and valid, and inserts the
// member and token, in one transaction (writers are serialized, so one of two accepts wins).
func (s *Store) AcceptInvitation(ctx context.Context, inv *kiln.Invitation, now time.Time, m *kiln.Member, token *kiln.Token) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM invitations WHERE org_id = ? AND id = ? AND hash = ? AND expires_at > ?
			AND EXISTS (SELECT 1 FROM organizations WHERE id = ?)`,
			inv.OrganizationID, inv.ID, inv.Hash, ms(now), inv.OrganizationID)
		if err != nil {
			return fmt.Errorf("sqlitestore: accept invitation: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return fmt.Errorf("sqlitestore: accept invitation: %w", err)
			}
			return kiln.ErrInvitationInvalid()
		}
		if err := insertMember(ctx, tx, m); err != nil {
			return err
		}
		return insertFirstToken(ctx, tx, token)
	})
}
