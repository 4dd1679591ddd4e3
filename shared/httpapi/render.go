package httpapi

import (
	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// The resources rendered as the JSON bodies of package api. Secrets have no field there, so no
// response can carry one.

func renderUproject(u *kiln.UprojectInfo) *api.Uproject {
	if u == nil {
		return nil
	}
	b := &api.Uproject{Path: u.Path, ProjectName: u.ProjectName, EngineVersion: u.EngineVersion,
		Modules: make([]api.Module, 0, len(u.Modules)), Plugins: make([]api.Plugin, 0, len(u.Plugins))}
	for _, m := range u.Modules {
		b.Modules = append(b.Modules, api.Module{Name: m.Name, Type: m.Type, LoadingPhase: m.LoadingPhase})
	}
	for _, p := range u.Plugins {
		b.Plugins = append(b.Plugins, api.Plugin{Name: p.Name, Enabled: p.Enabled})
	}
	return b
}

func renderProjectItem(p *kiln.Project) api.ProjectItem {
	return api.ProjectItem{ID: p.ID, Name: p.Name, SourceControl: string(p.SourceControl), RepoLink: p.RepoLink,
		LastBuildAt: optionalTimestamp(p.LastBuildAt), LastBuildStatus: nullable(string(p.LastBuildStatus)),
		CreatedAt: timestamp(p.CreatedAt)}
}

// streamOf is a Perforce project's stream, "" for one on a classic depot path (its depotPath says
// where it builds).
func streamOf(p *kiln.Project) string {
	if p.DepotPath != "" {
		return ""
	}
	return p.StreamPath
}

func renderProject(p *kiln.Project, settings []*kiln.BuildSetting) api.Project {
	b := api.Project{
		ProjectItem:    renderProjectItem(p),
		Description:    p.Description,
		InstallationID: nullable(p.InstallationID),
		DefaultBranch:  nullable(p.DefaultBranch),
		Depot:          nullable(p.Depot),
		StreamPath:     nullable(streamOf(p)),
		DepotPath:      nullable(p.DepotPath),
		UprojectPath:   p.UprojectPath,
		Uproject:       renderUproject(p.Uproject),
		BuildSettings:  make([]api.BuildSetting, 0, len(settings)),
		UpdatedAt:      timestamp(p.UpdatedAt),
	}
	for _, s := range settings {
		b.BuildSettings = append(b.BuildSettings, renderBuildSetting(s))
	}
	return b
}

func renderBuildSetting(s *kiln.BuildSetting) api.BuildSetting {
	return api.BuildSetting{
		ID: s.ID, ProjectID: s.ProjectID, Platform: string(s.Platform), BuildType: string(s.BuildType),
		Branch: nullable(s.Branch), StreamPath: nullable(s.StreamPath), UEVersion: nullable(s.UEVersion),
		UprojectPath: s.UprojectPath, Trigger: string(s.Trigger), Schedule: nullable(s.Schedule),
		NotifyOnComplete: s.NotifyOnComplete, AutoDeploy: s.AutoDeploy, UploadBuildURL: nullable(s.UploadBuildURL),
		UploadBuildAuthHeaderSet: len(s.UploadBuildAuthHeader) > 0, TimeoutMinutes: nullable(s.TimeoutMinutes), AgentPool: nullable(s.AgentPool),
		CreatedAt: timestamp(s.CreatedAt), UpdatedAt: timestamp(s.UpdatedAt),
	}
}

func renderCacheUse(b *kiln.Build) *api.CacheUse {
	if b.Cache == kiln.CacheNone {
		return nil
	}
	return &api.CacheUse{State: string(b.Cache), FromBuildID: nullable(b.CacheFrom), Reason: nullable(b.CacheReason)}
}

func renderBuild(b *kiln.Build) api.Build {
	return api.Build{
		ID: b.ID, Number: nullable(b.Number), ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID, Status: string(b.Status),
		Platform: string(b.Platform), BuildType: string(b.BuildType), Branch: b.Branch,
		Commit: nullable(b.Commit), CommitMessage: nullable(b.CommitMessage), Changelist: nullable(b.Changelist),
		UEVersion: b.UEVersion, UEVersionSource: nullable(string(b.UEVersionSource)), TriggeredBy: b.TriggeredBy, CreatedAt: timestamp(b.CreatedAt),
		StartedAt: optionalTimestamp(b.StartedAt), FinishedAt: optionalTimestamp(b.FinishedAt),
		DurationMs: b.DurationMs(), FailureReason: nullable(b.FailureReason),
		AutoDeployStatus: nullable(string(b.DeployStatus())), AutoDeployError: nullable(b.AutoDeployError),
		AutoDeployAttempts: b.AutoDeployAttempts, AgentPool: nullable(b.AgentPool), WaitingFor: nullable(b.WaitingFor()),
		Clean: b.Clean, Cache: renderCacheUse(b),
		RerunOf: nullable(b.RerunOf), Trigger: renderTrigger(b),
		Stage: nullable(b.CurrentStage()), Stages: renderStages(b.Stages),
	}
}

func renderArtifact(a *kiln.Artifact) api.Artifact {
	return api.Artifact{BuildID: a.BuildID, ProjectID: a.ProjectID, BuildSettingID: a.BuildSettingID,
		Platform: string(a.Platform), BuildType: string(a.BuildType), UEVersion: a.UEVersion, Branch: a.Branch,
		Commit: a.Commit, SizeBytes: a.SizeBytes, ChecksumMD5: a.ChecksumMD5, CreatedAt: timestamp(a.CreatedAt)}
}
