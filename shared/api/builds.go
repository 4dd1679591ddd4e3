package api

// Build is a build (GET /builds, POST /builds/:id/rerun, and webhook payloads).
type Build struct {
	ID string `json:"id"`
	// Number is the build's number in its project; null for a build from before builds were
	// numbered.
	Number         *int64  `json:"number"`
	ProjectID      string  `json:"projectId"`
	BuildSettingID string  `json:"buildSettingId"`
	Status         string  `json:"status"`
	Platform       string  `json:"platform"`
	BuildType      string  `json:"buildType"`
	Branch         string  `json:"branch"`
	Commit         *string `json:"commit"`
	CommitMessage  *string `json:"commitMessage"`
	Changelist     *string `json:"changelist"`
	UEVersion      string  `json:"ueVersion"`
	// UEVersionSource says why the build uses ueVersion: setting, uproject, organization or
	// newest; null for a build from before it was recorded.
	UEVersionSource  *string `json:"ueVersionSource"`
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
	Cache *CacheUse `json:"cache"`
	// RerunOf is the build this one re-runs; Trigger says readably who or what triggered it.
	RerunOf *string      `json:"rerunOf"`
	Trigger BuildTrigger `json:"trigger"`
	// Stage is the stage a running build is in (null before its first and once it ended);
	// Stages are the stages it went through.
	Stage  *string      `json:"stage"`
	Stages []BuildStage `json:"stages"`
	// Progress is a running build's estimated progress, null without history to judge by.
	Progress *Progress `json:"progress"`
}

// RerunAccepted is the answer to POST /builds/:id/rerun (202): the new build, with its id also as
// buildId, as a trigger answers it.
type RerunAccepted struct {
	Build
	BuildID string `json:"buildId"`
}

// WebhookBuild is the build in a webhook event's data: the build, and in build.complete a signed
// 24-hour download URL of its artifact, fresh in every delivery (absent in other events).
type WebhookBuild struct {
	Build
	ArtifactURL *string `json:"artifactUrl,omitempty"`
}

// BuildDetail is a build with its most recent log lines (GET /builds/:id, POST
// /builds/:id/cancel).
type BuildDetail struct {
	Build
	LogLines []LogLine `json:"logLines"`
}

// CacheUse is how a build started: warm from the cache a build saved, or cold and why.
type CacheUse struct {
	State       string  `json:"state"`
	FromBuildID *string `json:"fromBuildId"`
	Reason      *string `json:"reason"`
}

// BuildTrigger says who or what triggered a build, readably: kind user (by API, console or CLI),
// push (with its commit or changelist), schedule, or rerun (a user's re-run of another build).
// Name is null for a user who is no longer a member, and in webhook payloads.
type BuildTrigger struct {
	Kind    string  `json:"kind"`
	UserID  *string `json:"userId"`
	Name    *string `json:"name"`
	Commit  *string `json:"commit"`
	RerunOf *string `json:"rerunOf"`
}

// BuildStage is a stage a build went through; EndedAt is null while it is in it.
type BuildStage struct {
	Name      string  `json:"name"`
	StartedAt string  `json:"startedAt"`
	EndedAt   *string `json:"endedAt"`
}

// Progress is a running build's estimated progress (schema BuildProgress). RemainingMs is null
// once the build overruns (runs longer than its history says): the time left is then unknown,
// and Percent stays at 99.
type Progress struct {
	Stage       *string `json:"stage"`
	Percent     int     `json:"percent"`
	ElapsedMs   int64   `json:"elapsedMs"`
	RemainingMs *int64  `json:"remainingMs"`
	Overrun     bool    `json:"overrun"`
	BasedOn     int     `json:"basedOn"`
}
