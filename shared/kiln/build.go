package kiln

import (
	"slices"
	"time"
)

// BuildStatus is where a build is in its lifecycle.
type BuildStatus string

const (
	StatusPending    BuildStatus = "pending"
	StatusRunning    BuildStatus = "running"
	StatusComplete   BuildStatus = "complete"
	StatusFailed     BuildStatus = "failed"
	StatusSuperseded BuildStatus = "superseded"
)

// BuildStatuses lists every build status.
var BuildStatuses = []BuildStatus{StatusPending, StatusRunning, StatusComplete, StatusFailed, StatusSuperseded}

func (s BuildStatus) Valid() bool { return slices.Contains(BuildStatuses, s) }

// Terminal reports whether a build in this status has ended for good.
func (s BuildStatus) Terminal() bool {
	return s == StatusComplete || s == StatusFailed || s == StatusSuperseded
}

// transitions lists the allowed moves: pending → running → complete | failed; pending | running →
// superseded; pending → failed. Terminal states never change.
var transitions = map[BuildStatus][]BuildStatus{
	StatusPending: {StatusRunning, StatusFailed, StatusSuperseded},
	StatusRunning: {StatusComplete, StatusFailed, StatusSuperseded},
}

// CanTransition reports whether a build may move from one status to another.
func CanTransition(from, to BuildStatus) bool { return slices.Contains(transitions[from], to) }

// Build is one run of a build setting. Builds outlive their setting and project.
type Build struct {
	ID string
	// Number counts the builds of its project from 1, in the order they were triggered: the
	// store assigns it when it creates the build (whatever the caller set is replaced). Numbers
	// are unique and increasing per project, not always consecutive (a trigger that failed after
	// taking a number leaves a gap). 0 for a build created before builds were numbered, or whose
	// project was no longer stored.
	Number         int64
	OrganizationID string
	ProjectID      string
	BuildSettingID string
	Status         BuildStatus
	Platform       Platform
	BuildType      BuildType
	Branch         string
	Commit         string
	CommitMessage  string
	Changelist     string
	UEVersion      string
	// UEVersionSource says where UEVersion came from (the setting, the .uproject, the
	// organization's default, the newest engine installed); "" for builds from before it.
	UEVersionSource  UEVersionSource
	TriggeredBy      string
	FailureReason    string
	AutoDeployStatus AutoDeployStatus
	AutoDeployError  string
	// AutoDeployAttempts counts the delivery attempts made so far.
	AutoDeployAttempts int
	// AutoDeployNextAt is when the next delivery attempt is due while autoDeployStatus is pending
	// or delivering (the zero time: due now). While an attempt runs it is the end of that
	// attempt's lease: if the attempt's outcome is never recorded, the delivery is due again then.
	AutoDeployNextAt time.Time
	CreatedAt        time.Time
	StartedAt        *time.Time
	FinishedAt       *time.Time
	// HeartbeatAt is when the host running the build last reported; a running build whose host
	// has been silent for HeartbeatTimeout is failed.
	HeartbeatAt *time.Time
	// Host names the host (or executor) that claimed the build and runs it: set by the claim
	// that moved it to running, and only that host's heartbeats keep it running ("" while
	// pending, and for a build that never ran).
	Host string
	// HostCredentialHash is the SHA-256 (hex) of the per-build credential a remote build host
	// reports with (see package hostcred); "" for a build run in-process. Never shown in the API.
	HostCredentialHash string
	// AgentPool is the pool of the organization's agents the build waits for, copied from its
	// setting when it was triggered; "" for the service's own hosts.
	AgentPool string
	// TaskToken is the task token of the Step Functions state waiting for the build's agent (AWS
	// deployment, builds of an agent pool): the API passes the agent's heartbeats and the build's
	// end on with it. "" elsewhere. A secret of the workflow: never shown in the API.
	TaskToken string
	// BuildMinutes is the build minutes the build used, set when it ends (see Transition): the
	// wall-clock time from its start (claim, then source sync) to its end, rounded up; 0 for a
	// build that never ran. The store adds it to the organization's usage of the month it ended
	// in, in the same write as the end.
	BuildMinutes int64
	// Clean is set when the trigger asked for a clean build: the host ignores the build cache
	// and, when the build completes, replaces it. Fixed at trigger.
	Clean bool
	// Cache says how the build started: warm from the build cache that CacheFrom (a build id)
	// saved, or cold for CacheReason; CacheNone while the host has not looked yet.
	Cache       CacheState
	CacheFrom   string
	CacheReason string
	// RerunOf is the id of the build this one re-runs (same setting, branch and commit or
	// changelist), "" for a build triggered otherwise. Fixed at trigger.
	RerunOf string
	// Stages are the stages the build went through, in order, as its runner's log says (see
	// StageLinePrefix); the last is open while the build runs, and is ended when the build ends.
	Stages []BuildStage
}

// WaitingFor says what a pending build waits for, when it is an agent: "an agent in pool X".
func (b *Build) WaitingFor() string {
	if b.Status != StatusPending || b.AgentPool == "" {
		return ""
	}
	return "an agent in pool " + b.AgentPool
}

// HeartbeatTimeout is how long a running build's host may stay silent before the build fails.
const HeartbeatTimeout = 30 * time.Second

// DurationMs is finishedAt − startedAt in milliseconds (queue time is not build time), or nil
// while the build has not finished or never started.
func (b *Build) DurationMs() *int64 {
	if b.StartedAt == nil || b.FinishedAt == nil {
		return nil
	}
	d := b.FinishedAt.Sub(*b.StartedAt).Milliseconds()
	return &d
}

// Transition moves the build to status `to` at time `at`, setting startedAt or finishedAt and the
// failure reason. It refuses moves the lifecycle does not allow with invalid_state; the store then
// writes the result only if the stored status is still the one the move started from.
func (b *Build) Transition(to BuildStatus, at time.Time, failureReason string) error {
	if !CanTransition(b.Status, to) {
		return Errorf(EInvalidState, "build %s is %s and cannot become %s", b.ID, b.Status, to)
	}
	at = at.UTC()
	b.Status = to
	switch {
	case to == StatusRunning:
		b.StartedAt = &at
	case to.Terminal():
		b.FinishedAt = &at
		b.endStage(at)
		if b.StartedAt != nil {
			b.BuildMinutes = BuildMinutes(*b.StartedAt, at)
		}
		if to == StatusFailed {
			b.FailureReason = failureReason
		}
		if to != StatusComplete {
			// A build that did not complete is never delivered: auto deploy does not apply.
			b.AutoDeployStatus, b.AutoDeployError = AutoDeployNone, ""
		}
	}
	return nil
}

// DeployStatus is the autoDeployStatus to show: none for a build that ended without completing,
// whatever was stored before that rule (builds recorded "pending" then kept it).
func (b *Build) DeployStatus() AutoDeployStatus {
	if b.Status.Terminal() && b.Status != StatusComplete {
		return AutoDeployNone
	}
	return b.AutoDeployStatus
}

// Artifact is the packaged result of a complete build.
type Artifact struct {
	BuildID        string
	OrganizationID string
	ProjectID      string
	BuildSettingID string
	Platform       Platform
	BuildType      BuildType
	UEVersion      string
	Branch         string
	Commit         string
	// Key locates the tarball in the artifact store.
	Key         string
	SizeBytes   int64
	ChecksumMD5 string
	CreatedAt   time.Time
}

// UEVersionSource says why a build uses its engine version.
type UEVersionSource string

const (
	// UEVersionFromSetting: the build setting's ueVersion.
	UEVersionFromSetting UEVersionSource = "setting"
	// UEVersionFromUproject: the .uproject's EngineAssociation (the setting names none).
	UEVersionFromUproject UEVersionSource = "uproject"
	// UEVersionFromOrganization: the organization's defaultProjectSettings.ueVersion (neither
	// the setting nor the .uproject names one).
	UEVersionFromOrganization UEVersionSource = "organization"
	// UEVersionFromNewest: the newest engine the service's build hosts provide (nothing named one).
	UEVersionFromNewest UEVersionSource = "newest"
)
