package sqlitestore

import (
	"context"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

const artifactCols = `org_id, build_id, project_id, build_setting_id, platform, build_type, ue_version, branch,
	commit_sha, object_key, size_bytes, checksum_md5, created_at`

func scanArtifact(r scanner) (*kiln.Artifact, error) {
	var a kiln.Artifact
	var created int64
	if err := r.Scan(&a.OrganizationID, &a.BuildID, &a.ProjectID, &a.BuildSettingID, &a.Platform, &a.BuildType,
		&a.UEVersion, &a.Branch, &a.Commit, &a.Key, &a.SizeBytes, &a.ChecksumMD5, &created); err != nil {
		return nil, err
	}
	a.CreatedAt = fromMS(created)
	return &a, nil
}

func (s *Store) CreateArtifact(ctx context.Context, a *kiln.Artifact) error {
	return s.insert(ctx, "create artifact", fmt.Sprintf("build %s already has an artifact", a.BuildID),
		`INSERT INTO artifacts (`+artifactCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.OrganizationID, a.BuildID, a.ProjectID, a.BuildSettingID, a.Platform, a.BuildType, a.UEVersion,
		a.Branch, a.Commit, a.Key, a.SizeBytes, a.ChecksumMD5, ms(a.CreatedAt))
}

func (s *Store) GetArtifact(ctx context.Context, orgID, buildID string) (*kiln.Artifact, error) {
	return getOne(ctx, s, "get artifact", "artifact", scanArtifact,
		`SELECT `+artifactCols+` FROM artifacts WHERE org_id = ? AND build_id = ?`, orgID, buildID)
}

// ListArtifacts reads the project's artifacts by descending build id (index artifacts_by_project);
// artifacts have no foreign key to projects, so they are listed after the project is deleted.
func (s *Store) ListArtifacts(ctx context.Context, orgID, projectID string, f store.ArtifactFilter, p store.Page) ([]*kiln.Artifact, string, error) {
	q := inOrg(orgID)
	q.where("project_id = ?", projectID)
	whereIf(&q, "build_setting_id = ?", f.BuildSettingID)
	whereIf(&q, "branch = ?", f.Branch)
	whereIf(&q, "commit_sha = ?", f.Commit)
	return list(ctx, s, "list artifacts", artifactCols, "artifacts", "build_id", q, p, scanArtifact,
		func(a *kiln.Artifact) string { return a.BuildID })
}

func (s *Store) DeleteArtifact(ctx context.Context, orgID, buildID string) error {
	return s.change(ctx, "delete artifact", "artifact",
		`DELETE FROM artifacts WHERE org_id = ? AND build_id = ?`, orgID, buildID)
}
