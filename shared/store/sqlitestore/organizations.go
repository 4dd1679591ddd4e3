package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// defaultsJSON is how ProjectDefaults is kept in organizations.defaults.
type defaultsJSON struct {
	Platform         kiln.Platform  `json:"platform,omitempty"`
	BuildType        kiln.BuildType `json:"buildType,omitempty"`
	UEVersion        string         `json:"ueVersion,omitempty"`
	Trigger          kiln.Trigger   `json:"trigger,omitempty"`
	NotifyOnComplete *bool          `json:"notifyOnComplete,omitempty"`
}

func encodeDefaults(d kiln.ProjectDefaults) (string, error) {
	b, err := json.Marshal(defaultsJSON(d))
	return string(b), err
}

const orgCols = `id, name, slug, plan, defaults, github_installation_id, created_at, updated_at`

func scanOrg(r scanner) (*kiln.Organization, error) {
	var o kiln.Organization
	var defaults string
	var installation sql.NullString
	var created, updated int64
	if err := r.Scan(&o.ID, &o.Name, &o.Slug, &o.Plan, &defaults, &installation, &created, &updated); err != nil {
		return nil, err
	}
	o.Integrations.GitHubInstallationID = installation.String
	var d defaultsJSON
	if err := json.Unmarshal([]byte(defaults), &d); err != nil {
		return nil, fmt.Errorf("decode default project settings: %w", err)
	}
	o.DefaultProjectSettings = kiln.ProjectDefaults(d)
	o.CreatedAt, o.UpdatedAt = fromMS(created), fromMS(updated)
	return &o, nil
}

// CreateOrganization stores a new organization without integrations: only
// LinkGitHubInstallation links one, so that an installation is never linked twice.
func (s *Store) CreateOrganization(ctx context.Context, org *kiln.Organization, owner *kiln.Member, token *kiln.Token) error {
	defaults, err := encodeDefaults(org.DefaultProjectSettings)
	if err != nil {
		return fmt.Errorf("sqlitestore: create organization: %w", err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO organizations (`+orgCols+`) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)`,
			org.ID, org.Name, org.Slug, org.Plan, defaults, ms(org.CreatedAt), ms(org.UpdatedAt))
		if err != nil {
			return writeErr("create organization", err, fmt.Sprintf("an organization with slug %q already exists", org.Slug))
		}
		if err := insertMember(ctx, tx, owner); err != nil {
			return err
		}
		return insertToken(ctx, tx, token)
	})
}

func (s *Store) GetOrganization(ctx context.Context, id string) (*kiln.Organization, error) {
	o, err := scanOrg(s.queryRowContext(ctx, `SELECT `+orgCols+` FROM organizations WHERE id = ?`, id))
	if err != nil {
		return nil, readErr("get organization", err, "organization")
	}
	return o, nil
}

// UpdateOrganization replaces name, plan, defaults and updatedAt; slug and integrations stay.
func (s *Store) UpdateOrganization(ctx context.Context, org *kiln.Organization) error {
	defaults, err := encodeDefaults(org.DefaultProjectSettings)
	if err != nil {
		return fmt.Errorf("sqlitestore: update organization: %w", err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE organizations
		SET name = ?, plan = ?, defaults = ?, updated_at = ?
		WHERE id = ?`,
		org.Name, org.Plan, defaults, ms(org.UpdatedAt), org.ID)
	if err != nil {
		return fmt.Errorf("sqlitestore: update organization: %w", err)
	}
	return mustChange("update organization", res, "organization")
}
