package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// uprojectJSON is how UprojectInfo is kept in projects.uproject.
type uprojectJSON struct {
	Path          string       `json:"path"`
	ProjectName   string       `json:"projectName"`
	EngineVersion string       `json:"engineVersion"`
	Modules       []moduleJSON `json:"modules,omitempty"`
	Plugins       []pluginJSON `json:"plugins,omitempty"`
}

type moduleJSON struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	LoadingPhase string `json:"loadingPhase"`
}

type pluginJSON struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
}

func encodeUproject(u *kiln.UprojectInfo) (any, error) {
	if u == nil {
		return nil, nil
	}
	j := uprojectJSON{Path: u.Path, ProjectName: u.ProjectName, EngineVersion: u.EngineVersion}
	for _, m := range u.Modules {
		j.Modules = append(j.Modules, moduleJSON(m))
	}
	for _, p := range u.Plugins {
		j.Plugins = append(j.Plugins, pluginJSON(p))
	}
	b, err := json.Marshal(j)
	return string(b), err
}

func decodeUproject(v sql.NullString) (*kiln.UprojectInfo, error) {
	if !v.Valid {
		return nil, nil
	}
	var j uprojectJSON
	if err := json.Unmarshal([]byte(v.String), &j); err != nil {
		return nil, fmt.Errorf("decode uproject: %w", err)
	}
	u := &kiln.UprojectInfo{Path: j.Path, ProjectName: j.ProjectName, EngineVersion: j.EngineVersion}
	for _, m := range j.Modules {
		u.Modules = append(u.Modules, kiln.UprojectModule(m))
	}
	for _, p := range j.Plugins {
		u.Plugins = append(u.Plugins, kiln.UprojectPlugin(p))
	}
	return u, nil
}

const projectCols = `org_id, id, name, description, source_control, repo_link, installation_id, default_branch,
	depot, stream_path, uproject_path, uproject, last_build_at, last_build_status, created_at, updated_at, depot_path`

func scanProject(r scanner) (*kiln.Project, error) {
	var p kiln.Project
	var uproject sql.NullString
	var lastBuild sql.NullInt64
	var created, updated int64
	if err := r.Scan(&p.OrganizationID, &p.ID, &p.Name, &p.Description, &p.SourceControl, &p.RepoLink,
		&p.InstallationID, &p.DefaultBranch, &p.Depot, &p.StreamPath, &p.UprojectPath, &uproject, &lastBuild,
		&p.LastBuildStatus, &created, &updated, &p.DepotPath); err != nil {
		return nil, err
	}
	u, err := decodeUproject(uproject)
	if err != nil {
		return nil, err
	}
	p.Uproject, p.LastBuildAt = u, fromOptMS(lastBuild)
	p.CreatedAt, p.UpdatedAt = fromMS(created), fromMS(updated)
	return &p, nil
}

// CreateProject counts the organization's projects and inserts the new one in one write
// transaction. Write transactions begin IMMEDIATE (see Open), so they take the write lock before
// the count: two creations run one after the other, and the second counts the first's project.
func (s *Store) CreateProject(ctx context.Context, p *kiln.Project, max int) error {
	uproject, err := encodeUproject(p.Uproject)
	if err != nil {
		return fmt.Errorf("sqlitestore: create project: %w", err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		var orgs, n int
		if err := tx.QueryRowContext(ctx, `SELECT
			(SELECT COUNT(*) FROM organizations WHERE id = ?), (SELECT COUNT(*) FROM projects WHERE org_id = ?)`,
			p.OrganizationID, p.OrganizationID).Scan(&orgs, &n); err != nil {
			return fmt.Errorf("sqlitestore: create project: count projects: %w", err)
		}
		if orgs == 0 {
			return kiln.NotFound("organization")
		}
		if max > 0 && n >= max {
			return store.ProjectLimitReached(max)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO projects (`+projectCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			p.OrganizationID, p.ID, p.Name, p.Description, p.SourceControl, p.RepoLink, p.InstallationID,
			p.DefaultBranch, p.Depot, p.StreamPath, p.UprojectPath, uproject, optMS(p.LastBuildAt),
			p.LastBuildStatus, ms(p.CreatedAt), ms(p.UpdatedAt), p.DepotPath)
		if err != nil {
			return writeErr("create project", err, "the project already exists")
		}
		return nil
	})
}

func (s *Store) GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error) {
	return getOne(ctx, s, "get project", "project", scanProject,
		`SELECT `+projectCols+` FROM projects WHERE org_id = ? AND id = ?`, orgID, id)
}

func (s *Store) ListProjects(ctx context.Context, orgID string, f store.ProjectFilter, p store.Page) ([]*kiln.Project, string, error) {
	q := inOrg(orgID)
	whereIf(&q, "source_control = ?", f.SourceControl)
	return list(ctx, s, "list projects", projectCols, "projects", "id", q, p, scanProject,
		func(p *kiln.Project) string { return p.ID })
}

func (s *Store) UpdateProject(ctx context.Context, p *kiln.Project) error {
	uproject, err := encodeUproject(p.Uproject)
	if err != nil {
		return fmt.Errorf("sqlitestore: update project: %w", err)
	}
	return s.change(ctx, "update project", "project", `UPDATE projects
		SET name = ?, description = ?, uproject = ?, last_build_at = ?, last_build_status = ?, updated_at = ?
		WHERE org_id = ? AND id = ?`,
		p.Name, p.Description, uproject, optMS(p.LastBuildAt), p.LastBuildStatus, ms(p.UpdatedAt),
		p.OrganizationID, p.ID)
}

// DeleteProject deletes the project and its build settings; its builds stay.
func (s *Store) DeleteProject(ctx context.Context, orgID, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM build_settings WHERE org_id = ? AND project_id = ?`, orgID, id); err != nil {
			return fmt.Errorf("sqlitestore: delete project's build settings: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM projects WHERE org_id = ? AND id = ?`, orgID, id)
		if err != nil {
			return fmt.Errorf("sqlitestore: delete project: %w", err)
		}
		return mustChange("delete project", res, "project")
	})
}
