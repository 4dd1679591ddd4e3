package dynamostore

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// buildItem is a build: PK "ORG#<org>", SK "BUILD#<id>"; in GSI1 under "ORG#<org>#PROJECT#<p>",
// in GSI2 under "ORG#<org>#SETTING#<s>" and in GSI3 under "ORG#<org>#STATUS#<status>", each with
// sort key "BUILD#<id>"; while pending or running also in GSI4 under "QUEUE#<status>" / "<id>",
// the queue across organizations, and while complete with autoDeployStatus pending or delivering
// under "DEPLOY" / dueSK(autoDeployNextAt, id), the deliverer's queue in due order. GSI3's and GSI4's keys follow the status (and
// GSI4's the autoDeployStatus), so every write recomputes them (a build in neither GSI4 state has
// no GSI4 attributes).
type buildItem struct {
	itemKeys
	ID string `dynamo:"id"`
	// Number is left out while 0 (a build stored before builds were numbered, or of a project
	// that was not stored).
	Number         int64  `dynamo:"number,omitempty"`
	OrganizationID string `dynamo:"organizationId"`
	ProjectID      string `dynamo:"projectId,omitempty"`
	BuildSettingID string `dynamo:"buildSettingId,omitempty"`
	Status         string `dynamo:"status"`
	Platform       string `dynamo:"platform,omitempty"`
	BuildType      string `dynamo:"buildType,omitempty"`
	Branch         string `dynamo:"branch,omitempty"`
	Commit         string `dynamo:"commit,omitempty"`
	CommitMessage  string `dynamo:"commitMessage,omitempty"`
	Changelist     string `dynamo:"changelist,omitempty"`
	UEVersion      string `dynamo:"ueVersion,omitempty"`
	// UEVersionSource is left out while "" (builds from before it).
	UEVersionSource  string `dynamo:"ueVersionSource,omitempty"`
	TriggeredBy      string `dynamo:"triggeredBy,omitempty"`
	FailureReason    string `dynamo:"failureReason,omitempty"`
	AutoDeployStatus string `dynamo:"autoDeployStatus,omitempty"`
	AutoDeployError  string `dynamo:"autoDeployError,omitempty"`
	// AutoDeployAttempts is left out while 0, and read back as 0 when absent (items written
	// before it existed).
	AutoDeployAttempts int `dynamo:"autoDeployAttempts,omitempty"`
	// AutoDeployNextAt is left out while zero (due now).
	AutoDeployNextAt int64  `dynamo:"autoDeployNextAt,omitempty"`
	CreatedAt        int64  `dynamo:"createdAt"`
	StartedAt        *int64 `dynamo:"startedAt,omitempty"`
	FinishedAt       *int64 `dynamo:"finishedAt,omitempty"`
	HeartbeatAt      *int64 `dynamo:"heartbeatAt,omitempty"`
	// Host is left out while "" (a build no host claimed).
	Host string `dynamo:"host,omitempty"`
	// HostCredentialHash is left out while "" (a build run in-process, or not claimed).
	HostCredentialHash string `dynamo:"hostCredentialHash,omitempty"`
	// AgentPool is left out while "" (the service's own hosts).
	AgentPool string `dynamo:"agentPool,omitempty"`
	// TaskToken is left out while "" (a build no Step Functions state waits for by token).
	TaskToken string `dynamo:"taskToken,omitempty"`
	// BuildMinutes is left out while 0 (a build that has not ended, or never ran).
	BuildMinutes int64 `dynamo:"buildMinutes,omitempty"`
	// Clean is left out while false; the cache fields while "" (a build whose host has not
	// looked for a cache).
	Clean       bool   `dynamo:"clean,omitempty"`
	Cache       string `dynamo:"cacheState,omitempty"`
	CacheFrom   string `dynamo:"cacheFrom,omitempty"`
	CacheReason string `dynamo:"cacheReason,omitempty"`
	// RerunOf is left out while "" (a build that re-runs no other).
	RerunOf string `dynamo:"rerunOf,omitempty"`
	// Stages is left out while empty (a build whose runner named no stage yet).
	Stages []stageItem `dynamo:"stages,omitempty"`
}

// stageItem is one of a build's stages: times in Unix milliseconds, endedAt left out while the
// stage is open.
type stageItem struct {
	Name      string `dynamo:"name"`
	StartedAt int64  `dynamo:"startedAt"`
	EndedAt   *int64 `dynamo:"endedAt,omitempty"`
}

func stageItems(stages []kiln.BuildStage) []stageItem {
	if len(stages) == 0 {
		return nil
	}
	out := make([]stageItem, len(stages))
	for i, st := range stages {
		out[i] = stageItem{Name: st.Name, StartedAt: toMS(st.StartedAt), EndedAt: toMSPtr(st.EndedAt)}
	}
	return out
}

func buildStages(items []stageItem) []kiln.BuildStage {
	if len(items) == 0 {
		return nil
	}
	out := make([]kiln.BuildStage, len(items))
	for i, it := range items {
		out[i] = kiln.BuildStage{Name: it.Name, StartedAt: fromMS(it.StartedAt), EndedAt: fromMSPtr(it.EndedAt)}
	}
	return out
}

func newBuildItem(b *kiln.Build) *buildItem {
	keys := itemKeys{
		PK: orgPK(b.OrganizationID), SK: buildSK(b.ID), Type: typeBuild,
		GSI3PK: statusBuildsPK(b.OrganizationID, b.Status), GSI3SK: buildSK(b.ID),
	}
	if b.ProjectID != "" {
		keys.GSI1PK, keys.GSI1SK = projectBuildsPK(b.OrganizationID, b.ProjectID), buildSK(b.ID)
	}
	if b.BuildSettingID != "" {
		keys.GSI2PK, keys.GSI2SK = settingBuildsPK(b.OrganizationID, b.BuildSettingID), buildSK(b.ID)
	}
	switch {
	case queued(b.Status):
		keys.GSI4PK, keys.GSI4SK = queuePK(b.Status), b.ID
	case awaitingDelivery(b):
		keys.GSI4PK, keys.GSI4SK = deployPK, dueSK(toDueMS(b.AutoDeployNextAt), b.ID)
	}
	return &buildItem{
		itemKeys: keys,
		ID:       b.ID, Number: b.Number, OrganizationID: b.OrganizationID, ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID,
		Status: string(b.Status), Platform: string(b.Platform), BuildType: string(b.BuildType),
		Branch: b.Branch, Commit: b.Commit, CommitMessage: b.CommitMessage, Changelist: b.Changelist,
		UEVersion: b.UEVersion, UEVersionSource: string(b.UEVersionSource), TriggeredBy: b.TriggeredBy, FailureReason: b.FailureReason,
		AutoDeployStatus: string(b.AutoDeployStatus), AutoDeployError: b.AutoDeployError,
		AutoDeployAttempts: b.AutoDeployAttempts, AutoDeployNextAt: toDueMS(b.AutoDeployNextAt),
		CreatedAt: toMS(b.CreatedAt), StartedAt: toMSPtr(b.StartedAt), FinishedAt: toMSPtr(b.FinishedAt),
		HeartbeatAt: toMSPtr(b.HeartbeatAt), Host: b.Host, HostCredentialHash: b.HostCredentialHash, AgentPool: b.AgentPool,
		TaskToken: b.TaskToken, BuildMinutes: b.BuildMinutes,
		Clean: b.Clean, Cache: string(b.Cache), CacheFrom: b.CacheFrom, CacheReason: b.CacheReason,
		RerunOf: b.RerunOf, Stages: stageItems(b.Stages),
	}
}

func (it *buildItem) build() *kiln.Build {
	return &kiln.Build{
		ID: it.ID, Number: it.Number, OrganizationID: it.OrganizationID, ProjectID: it.ProjectID, BuildSettingID: it.BuildSettingID,
		Status: kiln.BuildStatus(it.Status), Platform: kiln.Platform(it.Platform), BuildType: kiln.BuildType(it.BuildType),
		Branch: it.Branch, Commit: it.Commit, CommitMessage: it.CommitMessage, Changelist: it.Changelist,
		UEVersion: it.UEVersion, UEVersionSource: kiln.UEVersionSource(it.UEVersionSource), TriggeredBy: it.TriggeredBy, FailureReason: it.FailureReason,
		AutoDeployStatus: kiln.AutoDeployStatus(it.AutoDeployStatus), AutoDeployError: it.AutoDeployError,
		AutoDeployAttempts: it.AutoDeployAttempts, AutoDeployNextAt: fromDueMS(it.AutoDeployNextAt),
		CreatedAt: fromMS(it.CreatedAt), StartedAt: fromMSPtr(it.StartedAt), FinishedAt: fromMSPtr(it.FinishedAt),
		HeartbeatAt: fromMSPtr(it.HeartbeatAt), Host: it.Host, HostCredentialHash: it.HostCredentialHash, AgentPool: it.AgentPool,
		TaskToken: it.TaskToken, BuildMinutes: it.BuildMinutes,
		Clean: it.Clean, Cache: kiln.CacheState(it.Cache), CacheFrom: it.CacheFrom, CacheReason: it.CacheReason,
		RerunOf: it.RerunOf, Stages: buildStages(it.Stages),
	}
}

// CreateBuild takes the build's number (see takeBuildNumber), then puts the build only if its key
// is free.
func (s *Store) CreateBuild(ctx context.Context, b *kiln.Build) error {
	if err := s.takeBuildNumber(ctx, b); err != nil {
		return err
	}
	err := s.table.Put(newBuildItem(b)).If(notExists, attrPK).Run(ctx)
	if isCondFailed(err) {
		return kiln.Errorf(kiln.EConflict, "build %s already exists", b.ID)
	}
	return wrap("create build", err)
}

func (s *Store) GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error) {
	return get(ctx, s, "get build", "build", orgPK(orgID), buildSK(id), (*buildItem).build)
}

// ListBuilds queries one partition, newest first: GSI2 by build setting, else GSI1 by project,
// else GSI3 by status, else the organization's "BUILD#" range. The remaining filter fields are a
// FilterExpression on that query.
func (s *Store) ListBuilds(ctx context.Context, orgID string, f store.BuildFilter, p store.Page) ([]*kiln.Build, string, error) {
	q := buildsQuery(orgID, f, p.After)
	return list(ctx, s, "list builds", q, limit(p), func(it *buildItem) string { return it.ID }, (*buildItem).build)
}

// buildsQuery picks the partition for f and rebuilds the ExclusiveStartKey from the cursor.
func buildsQuery(orgID string, f store.BuildFilter, after string) listQuery {
	pk, sk := orgPK(orgID), buildSK(after)
	q := listQuery{pkAttr: attrPK, skAttr: attrSK, pk: pk, skPrefix: prefixBuild}
	var filters []eqFilter
	add := func(attr, value string) {
		if value != "" {
			filters = append(filters, eqFilter{attr, value})
		}
	}
	switch {
	case f.BuildSettingID != "":
		q.index, q.pkAttr, q.skAttr = indexGSI2, attrGSI2PK, attrGSI2SK
		q.pk = settingBuildsPK(orgID, f.BuildSettingID)
		add("projectId", f.ProjectID)
		add("status", string(f.Status))
	case f.ProjectID != "":
		q.index, q.pkAttr, q.skAttr = indexGSI1, attrGSI1PK, attrGSI1SK
		q.pk = projectBuildsPK(orgID, f.ProjectID)
		add("status", string(f.Status))
	case f.Status != "":
		q.index, q.pkAttr, q.skAttr = indexGSI3, attrGSI3PK, attrGSI3SK
		q.pk = statusBuildsPK(orgID, f.Status)
	}
	add("platform", string(f.Platform))
	add("buildType", string(f.BuildType))
	add("branch", f.Branch)
	q.filters = filters
	if q.index == "" {
		q.start = startKey(after, attrPK, pk, attrSK, sk)
	} else {
		q.start = startKey(after, attrPK, pk, attrSK, sk, q.pkAttr, q.pk, q.skAttr, sk)
	}
	return q
}
