package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
)

const settingCols = `org_id, project_id, id, platform, build_type, branch, stream_path, ue_version, uproject_path,
	trigger, schedule, notify_on_complete, auto_deploy, upload_build_url, upload_build_auth_header, created_at, updated_at,
	timeout_minutes, agent_pool`

func scanSetting(r scanner) (*kiln.BuildSetting, error) {
	var b kiln.BuildSetting
	var created, updated int64
	if err := r.Scan(&b.OrganizationID, &b.ProjectID, &b.ID, &b.Platform, &b.BuildType, &b.Branch, &b.StreamPath,
		&b.UEVersion, &b.UprojectPath, &b.Trigger, &b.Schedule, &b.NotifyOnComplete, &b.AutoDeploy,
		&b.UploadBuildURL, &b.UploadBuildAuthHeader, &created, &updated, &b.TimeoutMinutes, &b.AgentPool); err != nil {
		return nil, err
	}
	b.CreatedAt, b.UpdatedAt = fromMS(created), fromMS(updated)
	return &b, nil
}

// CreateBuildSetting adds a setting to an existing project (not_found otherwise).
func (s *Store) CreateBuildSetting(ctx context.Context, b *kiln.BuildSetting) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM projects WHERE org_id = ? AND id = ?`, b.OrganizationID, b.ProjectID).Scan(&one)
		if err != nil {
			return readErr("create build setting", err, "project")
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO build_settings (`+settingCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			b.OrganizationID, b.ProjectID, b.ID, b.Platform, b.BuildType, b.Branch, b.StreamPath, b.UEVersion,
			b.UprojectPath, b.Trigger, b.Schedule, b.NotifyOnComplete, b.AutoDeploy, b.UploadBuildURL,
			b.UploadBuildAuthHeader, ms(b.CreatedAt), ms(b.UpdatedAt), b.TimeoutMinutes, b.AgentPool)
		if err != nil {
			return writeErr("create build setting", err, "the build setting already exists")
		}
		return nil
	})
}

func (s *Store) GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error) {
	return getOne(ctx, s, "get build setting", "build setting", scanSetting, `SELECT `+settingCols+` FROM build_settings
		WHERE org_id = ? AND project_id = ? AND id = ?`, orgID, projectID, id)
}

// ListBuildSettings lists all of a project's settings, oldest first.
func (s *Store) ListBuildSettings(ctx context.Context, orgID, projectID string) ([]*kiln.BuildSetting, error) {
	rows, err := s.queryContext(ctx, `SELECT `+settingCols+` FROM build_settings
		WHERE org_id = ? AND project_id = ? ORDER BY id`, orgID, projectID)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: list build settings: %w", err)
	}
	defer rows.Close()
	var out []*kiln.BuildSetting
	for rows.Next() {
		b, err := scanSetting(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: list build settings: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: list build settings: %w", err)
	}
	return out, nil
}

func (s *Store) UpdateBuildSetting(ctx context.Context, b *kiln.BuildSetting) error {
	return s.change(ctx, "update build setting", "build setting", `UPDATE build_settings
		SET platform = ?, build_type = ?, branch = ?, stream_path = ?, ue_version = ?, uproject_path = ?,
			trigger = ?, schedule = ?, notify_on_complete = ?, auto_deploy = ?, upload_build_url = ?,
			upload_build_auth_header = ?, updated_at = ?, timeout_minutes = ?, agent_pool = ?
		WHERE org_id = ? AND project_id = ? AND id = ?`,
		b.Platform, b.BuildType, b.Branch, b.StreamPath, b.UEVersion, b.UprojectPath, b.Trigger, b.Schedule,
		b.NotifyOnComplete, b.AutoDeploy, b.UploadBuildURL, b.UploadBuildAuthHeader, ms(b.UpdatedAt), b.TimeoutMinutes, b.AgentPool,
		b.OrganizationID, b.ProjectID, b.ID)
}

func (s *Store) DeleteBuildSetting(ctx context.Context, orgID, projectID, id string) error {
	return s.change(ctx, "delete build setting", "build setting",
		`DELETE FROM build_settings WHERE org_id = ? AND project_id = ? AND id = ?`,
		orgID, projectID, id)
}
