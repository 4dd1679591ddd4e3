package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

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

const orgCols = `id, name, slug, plan, defaults, github_installation_id, created_at, updated_at,
	perforce_server, perforce_user, perforce_ticket, perforce_fingerprint, perforce_updated_at, max_concurrent_builds,
	perforce_password, perforce_ticket_expires_at`

func scanOrg(r scanner) (*kiln.Organization, error) {
	var o kiln.Organization
	var defaults string
	var installation sql.NullString
	var created, updated int64
	var p4Server, p4User, p4Fingerprint sql.NullString
	var p4Ticket, p4Password []byte
	var p4Updated sql.NullInt64
	var p4Expires int64
	if err := r.Scan(&o.ID, &o.Name, &o.Slug, &o.Plan, &defaults, &installation, &created, &updated,
		&p4Server, &p4User, &p4Ticket, &p4Fingerprint, &p4Updated, &o.MaxConcurrentBuilds,
		&p4Password, &p4Expires); err != nil {
		return nil, err
	}
	if p4Server.Valid {
		o.Perforce = &kiln.PerforceCredentials{
			ServerURL:   p4Server.String,
			UserName:    p4User.String,
			Ticket:      p4Ticket,
			Fingerprint: p4Fingerprint.String,
			UpdatedAt:   fromMS(p4Updated.Int64),
			Password:    p4Password,
		}
		if p4Expires != 0 {
			o.Perforce.TicketExpiresAt = fromMS(p4Expires)
		}
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
// LinkGitHubInstallation links one, so that an installation is never linked twice. Perforce
// credentials are left out too: only SetPerforce saves them.
func (s *Store) CreateOrganization(ctx context.Context, org *kiln.Organization, owner *kiln.Member, token *kiln.Token) error {
	defaults, err := encodeDefaults(org.DefaultProjectSettings)
	if err != nil {
		return fmt.Errorf("sqlitestore: create organization: %w", err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO organizations (`+orgCols+`) VALUES (?, ?, ?, ?, ?, NULL, ?, ?,
			NULL, NULL, NULL, NULL, NULL, ?, NULL, 0)`,
			org.ID, org.Name, org.Slug, org.Plan, defaults, ms(org.CreatedAt), ms(org.UpdatedAt), org.MaxConcurrentBuilds)
		if err != nil {
			return writeErr("create organization", err, fmt.Sprintf("an organization with slug %q already exists", org.Slug))
		}
		if err := insertMember(ctx, tx, owner); err != nil {
			return err
		}
		return insertFirstToken(ctx, tx, token)
	})
}

func (s *Store) GetOrganization(ctx context.Context, id string) (*kiln.Organization, error) {
	return getOne(ctx, s, "get organization", "organization", scanOrg,
		`SELECT `+orgCols+` FROM organizations WHERE id = ?`, id)
}

// UpdateOrganization replaces name, plan, maxConcurrentBuilds, defaults and updatedAt; slug, integrations and
// Perforce credentials stay.
func (s *Store) UpdateOrganization(ctx context.Context, org *kiln.Organization) error {
	defaults, err := encodeDefaults(org.DefaultProjectSettings)
	if err != nil {
		return fmt.Errorf("sqlitestore: update organization: %w", err)
	}
	return s.change(ctx, "update organization", "organization", `UPDATE organizations
		SET name = ?, plan = ?, max_concurrent_builds = ?, defaults = ?, updated_at = ?
		WHERE id = ?`,
		org.Name, org.Plan, org.MaxConcurrentBuilds, defaults, ms(org.UpdatedAt), org.ID)
}

// SetPerforce saves the organization's Perforce credentials, or with nil clears them, and sets
// its updatedAt.
func (s *Store) SetPerforce(ctx context.Context, orgID string, creds *kiln.PerforceCredentials, at time.Time) (*kiln.Organization, error) {
	var server, user, ticket, fingerprint, updated, password any // NULL unless creds
	var expires int64
	if creds != nil {
		if creds.Password != nil {
			password = creds.Password
		}
		if !creds.TicketExpiresAt.IsZero() {
			expires = ms(creds.TicketExpiresAt)
		}
		server, user, fingerprint, updated = creds.ServerURL, creds.UserName, creds.Fingerprint, ms(creds.UpdatedAt)
		t := creds.Ticket
		if t == nil {
			t = []byte{} // a BLOB, not NULL
		}
		ticket = t
	}
	var org *kiln.Organization
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE organizations
			SET perforce_server = ?, perforce_user = ?, perforce_ticket = ?, perforce_fingerprint = ?,
				perforce_updated_at = ?, perforce_password = ?, perforce_ticket_expires_at = ?, updated_at = ?
			WHERE id = ?`,
			server, user, ticket, fingerprint, updated, password, expires, ms(at), orgID)
		if err != nil {
			return fmt.Errorf("sqlitestore: set Perforce credentials: %w", err)
		}
		if err := mustChange("set Perforce credentials", res, "organization"); err != nil {
			return err
		}
		org, err = getOrg(ctx, tx, orgID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return org, nil
}
