package dynamostore

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// artifactItem is a build's artifact: PK "ORG#<org>", SK "ARTIFACT#<buildId>"; in GSI1 under
// "ORG#<org>#PROJECT#<p>#ARTIFACTS" / "ARTIFACT#<buildId>" for the list by project, and in GSI4
// under "ARTIFACTS" / "<createdAt ms, 15 digits>#<org>#<buildId>" for the retention scan across
// organizations. Like builds, artifacts keep their GSI1 entry after the project is deleted.
type artifactItem struct {
	itemKeys
	BuildID        string `dynamo:"buildId"`
	OrganizationID string `dynamo:"organizationId"`
	ProjectID      string `dynamo:"projectId,omitempty"`
	BuildSettingID string `dynamo:"buildSettingId,omitempty"`
	Platform       string `dynamo:"platform,omitempty"`
	BuildType      string `dynamo:"buildType,omitempty"`
	UEVersion      string `dynamo:"ueVersion,omitempty"`
	Branch         string `dynamo:"branch,omitempty"`
	Commit         string `dynamo:"commit,omitempty"`
	Key            string `dynamo:"key,omitempty"`
	SizeBytes      int64  `dynamo:"sizeBytes"`
	ChecksumMD5    string `dynamo:"checksumMd5,omitempty"`
	CreatedAt      int64  `dynamo:"createdAt"`
}

func newArtifactItem(a *kiln.Artifact) *artifactItem {
	keys := itemKeys{
		PK: orgPK(a.OrganizationID), SK: artifactSK(a.BuildID), Type: typeArtifact,
		GSI4PK: artifactsPK, GSI4SK: artifactAgeSK(toMS(a.CreatedAt), a.OrganizationID, a.BuildID),
	}
	if a.ProjectID != "" {
		keys.GSI1PK, keys.GSI1SK = projectArtifactsPK(a.OrganizationID, a.ProjectID), artifactSK(a.BuildID)
	}
	return &artifactItem{
		itemKeys: keys,
		BuildID:  a.BuildID, OrganizationID: a.OrganizationID, ProjectID: a.ProjectID, BuildSettingID: a.BuildSettingID,
		Platform: string(a.Platform), BuildType: string(a.BuildType), UEVersion: a.UEVersion,
		Branch: a.Branch, Commit: a.Commit, Key: a.Key, SizeBytes: a.SizeBytes, ChecksumMD5: a.ChecksumMD5,
		CreatedAt: toMS(a.CreatedAt),
	}
}

func (it *artifactItem) artifact() *kiln.Artifact {
	return &kiln.Artifact{
		BuildID: it.BuildID, OrganizationID: it.OrganizationID, ProjectID: it.ProjectID, BuildSettingID: it.BuildSettingID,
		Platform: kiln.Platform(it.Platform), BuildType: kiln.BuildType(it.BuildType), UEVersion: it.UEVersion,
		Branch: it.Branch, Commit: it.Commit, Key: it.Key, SizeBytes: it.SizeBytes, ChecksumMD5: it.ChecksumMD5,
		CreatedAt: fromMS(it.CreatedAt),
	}
}

// CreateArtifact puts the artifact only if its build has none yet.
func (s *Store) CreateArtifact(ctx context.Context, a *kiln.Artifact) error {
	err := s.table.Put(newArtifactItem(a)).If(notExists, attrPK).Run(ctx)
	if isCondFailed(err) {
		return kiln.Errorf(kiln.EConflict, "build %s already has an artifact", a.BuildID)
	}
	return wrap("create artifact", err)
}

func (s *Store) GetArtifact(ctx context.Context, orgID, buildID string) (*kiln.Artifact, error) {
	return get(ctx, s, "get artifact", "artifact", orgPK(orgID), artifactSK(buildID), (*artifactItem).artifact)
}

// ListArtifacts queries GSI1's partition "ORG#<org>#PROJECT#<p>#ARTIFACTS", newest build first;
// the filter fields are a FilterExpression on it.
func (s *Store) ListArtifacts(ctx context.Context, orgID, projectID string, f store.ArtifactFilter, p store.Page) ([]*kiln.Artifact, string, error) {
	pk := projectArtifactsPK(orgID, projectID)
	q := listQuery{
		index: indexGSI1, pkAttr: attrGSI1PK, skAttr: attrGSI1SK, pk: pk, skPrefix: prefixArtifact,
		start: startKey(p.After, attrPK, orgPK(orgID), attrSK, artifactSK(p.After),
			attrGSI1PK, pk, attrGSI1SK, artifactSK(p.After)),
	}
	for _, fl := range []eqFilter{{"buildSettingId", f.BuildSettingID}, {"branch", f.Branch}, {"commit", f.Commit}} {
		if fl.value != "" {
			q.filters = append(q.filters, fl)
		}
	}
	return list(ctx, s, "list artifacts", q, limit(p), func(it *artifactItem) string { return it.BuildID }, (*artifactItem).artifact)
}

// DeleteArtifact deletes the artifact's item only if it exists.
func (s *Store) DeleteArtifact(ctx context.Context, orgID, buildID string) error {
	err := s.table.Delete(attrPK, orgPK(orgID)).Range(attrSK, artifactSK(buildID)).If(exists, attrPK).Run(ctx)
	if isCondFailed(err) {
		return kiln.NotFound("artifact")
	}
	return wrap("delete artifact", err)
}
