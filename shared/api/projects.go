package api

// ProjectItem is a project in GET /projects.
type ProjectItem struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	SourceControl   string  `json:"sourceControl"`
	RepoLink        string  `json:"repoLink"`
	LastBuildAt     *string `json:"lastBuildAt"`
	LastBuildStatus *string `json:"lastBuildStatus"`
	CreatedAt       string  `json:"createdAt"`
}

// Project is a project's detail (GET /projects/:id) with its build settings.
type Project struct {
	ProjectItem
	Description    string         `json:"description"`
	InstallationID *string        `json:"installationId"`
	DefaultBranch  *string        `json:"defaultBranch"`
	Depot          *string        `json:"depot"`
	StreamPath     *string        `json:"streamPath"`
	DepotPath      *string        `json:"depotPath"`
	UprojectPath   string         `json:"uprojectPath"`
	Uproject       *Uproject      `json:"uproject"`
	BuildSettings  []BuildSetting `json:"buildSettings"`
	UpdatedAt      string         `json:"updatedAt"`
}

// Uproject is a detected .uproject file.
type Uproject struct {
	Path          string   `json:"path"`
	ProjectName   string   `json:"projectName"`
	EngineVersion string   `json:"engineVersion"`
	Modules       []Module `json:"modules"`
	Plugins       []Plugin `json:"plugins"`
}

// Module is a module a .uproject declares.
type Module struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	LoadingPhase string `json:"loadingPhase"`
}

// Plugin is a plugin a .uproject names.
type Plugin struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
}

// BuildSetting is a project's build setting. Branch is set for GitHub projects, StreamPath for
// Perforce ones. The upload's Authorization value is never answered, only whether one is set.
type BuildSetting struct {
	ID                       string  `json:"id"`
	ProjectID                string  `json:"projectId"`
	Platform                 string  `json:"platform"`
	BuildType                string  `json:"buildType"`
	Branch                   *string `json:"branch"`
	StreamPath               *string `json:"streamPath"`
	UEVersion                *string `json:"ueVersion"`
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
