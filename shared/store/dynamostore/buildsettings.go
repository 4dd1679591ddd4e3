package dynamostore

import (
	"context"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// settingItem is a build setting: PK "ORG#<org>", SK "SETTING#<projectId>#<id>", so that a
// project's settings are one sort-key range next to it. A scheduled setting is also in GSI4 under
// "SCHEDULED" / "<org>#<id>", for the scheduler's scan across organizations.
type settingItem struct {
	itemKeys
	ID                    string `dynamo:"id"`
	OrganizationID        string `dynamo:"organizationId"`
	ProjectID             string `dynamo:"projectId"`
	Platform              string `dynamo:"platform"`
	BuildType             string `dynamo:"buildType"`
	Branch                string `dynamo:"branch,omitempty"`
	StreamPath            string `dynamo:"streamPath,omitempty"`
	UEVersion             string `dynamo:"ueVersion"`
	UprojectPath          string `dynamo:"uprojectPath,omitempty"`
	Trigger               string `dynamo:"trigger"`
	Schedule              string `dynamo:"schedule,omitempty"`
	NotifyOnComplete      bool   `dynamo:"notifyOnComplete"`
	AutoDeploy            bool   `dynamo:"autoDeploy"`
	UploadBuildURL        string `dynamo:"uploadBuildUrl,omitempty"`
	UploadBuildAuthHeader []byte `dynamo:"uploadBuildAuthHeader,omitempty"`
	TimeoutMinutes        int    `dynamo:"timeoutMinutes,omitempty"`
	AgentPool             string `dynamo:"agentPool,omitempty"`
	CreatedAt             int64  `dynamo:"createdAt"`
	UpdatedAt             int64  `dynamo:"updatedAt"`
}

// settingMutable are the attributes UpdateBuildSetting replaces: all but the table keys, ids and
// createdAt. The GSI4 keys follow the trigger: set when it is scheduled, removed otherwise.
var settingMutable = []string{
	"platform", "buildType", "branch", "streamPath", "ueVersion", "uprojectPath", "trigger",
	"schedule", "notifyOnComplete", "autoDeploy", "uploadBuildUrl", "uploadBuildAuthHeader", "timeoutMinutes", "agentPool",
	"updatedAt", attrGSI4PK, attrGSI4SK,
}

func newSettingItem(s *kiln.BuildSetting) *settingItem {
	keys := itemKeys{PK: orgPK(s.OrganizationID), SK: settingSK(s.ProjectID, s.ID), Type: typeBuildSetting}
	if s.Trigger == kiln.TriggerScheduled {
		keys.GSI4PK, keys.GSI4SK = scheduledPK, scheduledSK(s.OrganizationID, s.ID)
	}
	return &settingItem{
		itemKeys: keys,
		ID:       s.ID, OrganizationID: s.OrganizationID, ProjectID: s.ProjectID,
		Platform: string(s.Platform), BuildType: string(s.BuildType), Branch: s.Branch,
		StreamPath: s.StreamPath, UEVersion: s.UEVersion, UprojectPath: s.UprojectPath,
		Trigger: string(s.Trigger), Schedule: s.Schedule, NotifyOnComplete: s.NotifyOnComplete,
		AutoDeploy: s.AutoDeploy, UploadBuildURL: s.UploadBuildURL, UploadBuildAuthHeader: s.UploadBuildAuthHeader,
		TimeoutMinutes: s.TimeoutMinutes, AgentPool: s.AgentPool, CreatedAt: toMS(s.CreatedAt), UpdatedAt: toMS(s.UpdatedAt),
	}
}

func (it *settingItem) setting() *kiln.BuildSetting {
	return &kiln.BuildSetting{
		ID: it.ID, OrganizationID: it.OrganizationID, ProjectID: it.ProjectID,
		Platform: kiln.Platform(it.Platform), BuildType: kiln.BuildType(it.BuildType), Branch: it.Branch,
		StreamPath: it.StreamPath, UEVersion: it.UEVersion, UprojectPath: it.UprojectPath,
		Trigger: kiln.Trigger(it.Trigger), Schedule: it.Schedule, NotifyOnComplete: it.NotifyOnComplete,
		AutoDeploy: it.AutoDeploy, UploadBuildURL: it.UploadBuildURL, UploadBuildAuthHeader: it.UploadBuildAuthHeader,
		TimeoutMinutes: it.TimeoutMinutes, AgentPool: it.AgentPool, CreatedAt: fromMS(it.CreatedAt), UpdatedAt: fromMS(it.UpdatedAt),
	}
}

// settingsQuery reads all of a project's settings, oldest first.
func settingsQuery(orgID, projectID string) listQuery {
	return listQuery{
		pkAttr: attrPK, skAttr: attrSK, pk: orgPK(orgID), skPrefix: settingPrefix(projectID), forward: true,
	}
}

// CreateBuildSetting writes, in one transaction, a check that the project exists and the setting
// (only if absent).
func (s *Store) CreateBuildSetting(ctx context.Context, bs *kiln.BuildSetting) error {
	err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Check(s.table.Check(attrPK, orgPK(bs.OrganizationID)).Range(attrSK, projectSK(bs.ProjectID)).IfExists())
		tx.Put(s.table.Put(newSettingItem(bs)).If(notExists, attrPK))
	})
	if at := txFailedAt(err); at != nil {
		if at[0] == 0 {
			return kiln.NotFound("project")
		}
		return kiln.Errorf(kiln.EConflict, "build setting %s already exists", bs.ID)
	}
	return wrap("create build setting", err)
}

func (s *Store) GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error) {
	return get(ctx, s, "get build setting", "build setting", orgPK(orgID), settingSK(projectID, id), (*settingItem).setting)
}

// ListBuildSettings queries SK begins_with "SETTING#<projectId>#" in ascending order, all pages.
func (s *Store) ListBuildSettings(ctx context.Context, orgID, projectID string) ([]*kiln.BuildSetting, error) {
	return listAll(ctx, s, "list build settings", settingsQuery(orgID, projectID), 0, (*settingItem).setting)
}

// UpdateBuildSetting sets the mutable attributes, and the GSI4 keys when the trigger is scheduled
// (removing them otherwise), on the existing item.
func (s *Store) UpdateBuildSetting(ctx context.Context, bs *kiln.BuildSetting) error {
	err := s.updateFields(ctx, orgPK(bs.OrganizationID), settingSK(bs.ProjectID, bs.ID), newSettingItem(bs), settingMutable)
	if isCondFailed(err) {
		return kiln.NotFound("build setting")
	}
	return wrap("update build setting", err)
}

// DeleteBuildSetting deletes the item only if it exists.
func (s *Store) DeleteBuildSetting(ctx context.Context, orgID, projectID, id string) error {
	err := s.table.Delete(attrPK, orgPK(orgID)).Range(attrSK, settingSK(projectID, id)).If(exists, attrPK).Run(ctx)
	if isCondFailed(err) {
		return kiln.NotFound("build setting")
	}
	return wrap("delete build setting", err)
}
