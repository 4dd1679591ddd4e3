package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// A linked GitHub App installation is organizations.github_installation_id, NULL when none; a
// unique index on it keeps each installation with at most one organization. Link and unlink run
// in one write transaction (BEGIN IMMEDIATE), so they read and write without interleaving.

// LinkGitHubInstallation sets the organization's installation, replacing (and so freeing) the one
// it had. One linked to another organization fails the unique index: github_installation_in_use.
func (s *Store) LinkGitHubInstallation(ctx context.Context, orgID, installationID string, at time.Time) (*kiln.Organization, error) {
	if installationID == "" {
		return nil, kiln.Errorf(kiln.EBadRequest, "the installation id is empty")
	}
	var org *kiln.Organization
	err := s.tx(ctx, func(tx *sql.Tx) error {
		o, err := getOrg(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if o.Integrations.GitHubInstallationID == installationID {
			org = o // already linked: nothing to write
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE organizations SET github_installation_id = ?, updated_at = ? WHERE id = ?`,
			installationID, ms(at), orgID)
		if isConstraint(err) {
			return kiln.Errorf(kiln.EGitHubInstallationInUse,
				"GitHub installation %s is linked to another organization", installationID)
		}
		if err != nil {
			return fmt.Errorf("sqlitestore: link GitHub installation: %w", err)
		}
		org, err = getOrg(ctx, tx, orgID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return org, nil
}

// UnlinkGitHubInstallation clears the organization's installation, if it has one.
func (s *Store) UnlinkGitHubInstallation(ctx context.Context, orgID string, at time.Time) (*kiln.Organization, error) {
	var org *kiln.Organization
	err := s.tx(ctx, func(tx *sql.Tx) error {
		o, err := getOrg(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if o.Integrations.GitHubInstallationID == "" {
			org = o // nothing linked: nothing to write
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE organizations SET github_installation_id = NULL, updated_at = ? WHERE id = ?`,
			ms(at), orgID)
		if err != nil {
			return fmt.Errorf("sqlitestore: unlink GitHub installation: %w", err)
		}
		org, err = getOrg(ctx, tx, orgID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return org, nil
}

func (s *Store) GetOrganizationByInstallation(ctx context.Context, installationID string) (*kiln.Organization, error) {
	return getOne(ctx, s, "get organization by installation", "organization", scanOrg,
		`SELECT `+orgCols+` FROM organizations WHERE github_installation_id = ?`, installationID)
}

func getOrg(ctx context.Context, tx *sql.Tx, id string) (*kiln.Organization, error) {
	o, err := scanOrg(tx.QueryRowContext(ctx, `SELECT `+orgCols+` FROM organizations WHERE id = ?`, id))
	if err != nil {
		return nil, readErr("get organization", err, "organization")
	}
	return o, nil
}
