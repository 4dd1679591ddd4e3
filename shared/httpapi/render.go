package httpapi

import "github.com/kilnbuild/kiln/shared/kiln"

// The JSON shapes of the resources, as the contract and docs/api.md name them. Secrets have no
// field here, so no response can carry one.

type moduleBody struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	LoadingPhase string `json:"loadingPhase"`
}

type pluginBody struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
}

type uprojectBody struct {
	Path          string       `json:"path"`
	ProjectName   string       `json:"projectName"`
	EngineVersion string       `json:"engineVersion"`
	Modules       []moduleBody `json:"modules"`
	Plugins       []pluginBody `json:"plugins"`
}

func renderUproject(u *kiln.UprojectInfo) *uprojectBody {
	if u == nil {
		return nil
	}
	b := &uprojectBody{Path: u.Path, ProjectName: u.ProjectName, EngineVersion: u.EngineVersion,
		Modules: make([]moduleBody, 0, len(u.Modules)), Plugins: make([]pluginBody, 0, len(u.Plugins))}
	for _, m := range u.Modules {
		b.Modules = append(b.Modules, moduleBody{Name: m.Name, Type: m.Type, LoadingPhase: m.LoadingPhase})
	}
	for _, p := range u.Plugins {
		b.Plugins = append(b.Plugins, pluginBody{Name: p.Name, Enabled: p.Enabled})
	}
	return b
}

type projectItemBody struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	SourceControl   string  `json:"sourceControl"`
	RepoLink        string  `json:"repoLink"`
	LastBuildAt     *string `json:"lastBuildAt"`
	LastBuildStatus *string `json:"lastBuildStatus"`
	CreatedAt       string  `json:"createdAt"`
}

func renderProjectItem(p *kiln.Project) projectItemBody {
	return projectItemBody{ID: p.ID, Name: p.Name, SourceControl: string(p.SourceControl), RepoLink: p.RepoLink,
		LastBuildAt: optionalTimestamp(p.LastBuildAt), LastBuildStatus: nullable(string(p.LastBuildStatus)),
		CreatedAt: timestamp(p.CreatedAt)}
}

type projectBody struct {
	projectItemBody
	Description    string             `json:"description"`
	InstallationID *string            `json:"installationId"`
	DefaultBranch  *string            `json:"defaultBranch"`
	Depot          *string            `json:"depot"`
	StreamPath     *string            `json:"streamPath"`
	UprojectPath   string             `json:"uprojectPath"`
	Uproject       *uprojectBody      `json:"uproject"`
	BuildSettings  []buildSettingBody `json:"buildSettings"`
	UpdatedAt      string             `json:"updatedAt"`
}

func renderProject(p *kiln.Project, settings []*kiln.BuildSetting) projectBody {
	b := projectBody{
		projectItemBody: renderProjectItem(p),
		Description:     p.Description,
		InstallationID:  nullable(p.InstallationID),
		DefaultBranch:   nullable(p.DefaultBranch),
		Depot:           nullable(p.Depot),
		StreamPath:      nullable(p.StreamPath),
		UprojectPath:    p.UprojectPath,
		Uproject:        renderUproject(p.Uproject),
		BuildSettings:   make([]buildSettingBody, 0, len(settings)),
		UpdatedAt:       timestamp(p.UpdatedAt),
	}
	for _, s := range settings {
		b.BuildSettings = append(b.BuildSettings, renderBuildSetting(s))
	}
	return b
}

type buildSettingBody struct {
	ID                       string  `json:"id"`
	ProjectID                string  `json:"projectId"`
	Platform                 string  `json:"platform"`
	BuildType                string  `json:"buildType"`
	Branch                   *string `json:"branch"`
	StreamPath               *string `json:"streamPath"`
	UEVersion                string  `json:"ueVersion"`
	UprojectPath             string  `json:"uprojectPath"`
	Trigger                  string  `json:"trigger"`
	Schedule                 *string `json:"schedule"`
	NotifyOnComplete         bool    `json:"notifyOnComplete"`
	AutoDeploy               bool    `json:"autoDeploy"`
	UploadBuildURL           *string `json:"uploadBuildUrl"`
	UploadBuildAuthHeaderSet bool    `json:"uploadBuildAuthHeaderSet"`
	TimeoutMinutes           *int    `json:"timeoutMinutes"`
	AgentPool                *string `json:"agentPool"`
	CreatedAt                string  `json:"createdAt"`
	UpdatedAt                string  `json:"updatedAt"`
}

func renderBuildSetting(s *kiln.BuildSetting) buildSettingBody {
	return buildSettingBody{
		ID: s.ID, ProjectID: s.ProjectID, Platform: string(s.Platform), BuildType: string(s.BuildType),
		Branch: nullable(s.Branch), StreamPath: nullable(s.StreamPath), UEVersion: s.UEVersion,
		UprojectPath: s.UprojectPath, Trigger: string(s.Trigger), Schedule: nullable(s.Schedule),
		NotifyOnComplete: s.NotifyOnComplete, AutoDeploy: s.AutoDeploy, UploadBuildURL: nullable(s.UploadBuildURL),
		UploadBuildAuthHeaderSet: len(s.UploadBuildAuthHeader) > 0, TimeoutMinutes: nullable(s.TimeoutMinutes), AgentPool: nullable(s.AgentPool),
		CreatedAt: timestamp(s.CreatedAt), UpdatedAt: timestamp(s.UpdatedAt),
	}
}

type buildBody struct {
	ID string `json:"id"`
	// Number is the build's number in its project; null for a build from before builds were
	// numbered.
	Number           *int64  `json:"number"`
	ProjectID        string  `json:"projectId"`
	BuildSettingID   string  `json:"buildSettingId"`
	Status           string  `json:"status"`
	Platform         string  `json:"platform"`
	BuildType        string  `json:"buildType"`
	Branch           string  `json:"branch"`
	Commit           *string `json:"commit"`
	CommitMessage    *string `json:"commitMessage"`
	Changelist       *string `json:"changelist"`
	UEVersion        string  `json:"ueVersion"`
	TriggeredBy      string  `json:"triggeredBy"`
	CreatedAt        string  `json:"createdAt"`
	StartedAt        *string `json:"startedAt"`
	FinishedAt       *string `json:"finishedAt"`
	DurationMs       *int64  `json:"durationMs"`
	FailureReason    *string `json:"failureReason"`
	AutoDeployStatus *string `json:"autoDeployStatus"`
	AutoDeployError  *string `json:"autoDeployError"`
	// AutoDeployAttempts counts delivery attempts so far.
	AutoDeployAttempts int     `json:"autoDeployAttempts"`
	AgentPool          *string `json:"agentPool"`
	WaitingFor         *string `json:"waitingFor"`
	Clean              bool    `json:"clean"`
	// Cache is null until the host looked for a build cache.
	Cache *cacheUseBody `json:"cache"`
	// RerunOf is the build this one re-runs; Trigger says readably who or what triggered it.
	RerunOf *string     `json:"rerunOf"`
	Trigger triggerBody `json:"trigger"`
	// Stage is the stage a running build is in (null before its first and once it ended);
	// Stages are the stages it went through.
	Stage  *string     `json:"stage"`
	Stages []stageBody `json:"stages"`
	// Progress is a running build's estimated progress, null without history to judge by.
	Progress *progressBody `json:"progress"`
}

type cacheUseBody struct {
	State       string  `json:"state"`
	FromBuildID *string `json:"fromBuildId"`
	Reason      *string `json:"reason"`
}

func renderCacheUse(b *kiln.Build) *cacheUseBody {
	if b.Cache == kiln.CacheNone {
		return nil
	}
	return &cacheUseBody{State: string(b.Cache), FromBuildID: nullable(b.CacheFrom), Reason: nullable(b.CacheReason)}
}

func renderBuild(b *kiln.Build) buildBody {
	return buildBody{
		ID: b.ID, Number: nullable(b.Number), ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID, Status: string(b.Status),
		Platform: string(b.Platform), BuildType: string(b.BuildType), Branch: b.Branch,
		Commit: nullable(b.Commit), CommitMessage: nullable(b.CommitMessage), Changelist: nullable(b.Changelist),
		UEVersion: b.UEVersion, TriggeredBy: b.TriggeredBy, CreatedAt: timestamp(b.CreatedAt),
		StartedAt: optionalTimestamp(b.StartedAt), FinishedAt: optionalTimestamp(b.FinishedAt),
		DurationMs: b.DurationMs(), FailureReason: nullable(b.FailureReason),
		AutoDeployStatus: nullable(string(b.DeployStatus())), AutoDeployError: nullable(b.AutoDeployError),
		AutoDeployAttempts: b.AutoDeployAttempts, AgentPool: nullable(b.AgentPool), WaitingFor: nullable(b.WaitingFor()),
		Clean: b.Clean, Cache: renderCacheUse(b),
		RerunOf: nullable(b.RerunOf), Trigger: renderTrigger(b),
		Stage: nullable(b.CurrentStage()), Stages: renderStages(b.Stages),
	}
}

type logLineBody struct {
	Timestamp string `json:"timestamp"`
	Level     string `json:"level"`
	Message   string `json:"message"`
}

type buildDetailBody struct {
	buildBody
	LogLines []logLineBody `json:"logLines"`
}

type artifactBody struct {
	BuildID        string `json:"buildId"`
	ProjectID      string `json:"projectId"`
	BuildSettingID string `json:"buildSettingId"`
	Platform       string `json:"platform"`
	BuildType      string `json:"buildType"`
	UEVersion      string `json:"ueVersion"`
	Branch         string `json:"branch"`
	Commit         string `json:"commit"`
	SizeBytes      int64  `json:"sizeBytes"`
	ChecksumMD5    string `json:"checksumMd5"`
	CreatedAt      string `json:"createdAt"`
}

func renderArtifact(a *kiln.Artifact) artifactBody {
	return artifactBody{BuildID: a.BuildID, ProjectID: a.ProjectID, BuildSettingID: a.BuildSettingID,
		Platform: string(a.Platform), BuildType: string(a.BuildType), UEVersion: a.UEVersion, Branch: a.Branch,
		Commit: a.Commit, SizeBytes: a.SizeBytes, ChecksumMD5: a.ChecksumMD5, CreatedAt: timestamp(a.CreatedAt)}
}
