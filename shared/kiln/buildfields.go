package kiln

import (
	"slices"
	"time"
)

// BuildFields names fields of a Build: the ones a store update writes. A partial update writes
// only those, so two writers that changed different fields of the same build from the same
// read (a host's heartbeat and an API write) do not undo each other.
type BuildFields uint32

// The fields a build update may write; ID, OrganizationID and CreatedAt never change.
const (
	FieldStatus BuildFields = 1 << iota
	FieldProjectID
	FieldBuildSettingID
	FieldPlatform
	FieldBuildType
	FieldBranch
	FieldCommit
	FieldCommitMessage
	FieldChangelist
	FieldUEVersion
	FieldTriggeredBy
	FieldFailureReason
	FieldAutoDeployStatus
	FieldAutoDeployError
	FieldAutoDeployAttempts
	FieldAutoDeployNextAt
	FieldStartedAt
	FieldFinishedAt
	FieldHeartbeatAt
	FieldHost
	FieldHostCredentialHash
	FieldAgentPool
	FieldTaskToken
	FieldBuildMinutes
	// FieldCache names Cache, CacheFrom and CacheReason, written together.
	FieldCache
	// FieldStages names Stages.
	FieldStages

	// AllBuildFields is every field an update may write: the whole build as the writer has it.
	AllBuildFields = FieldStages<<1 - 1
)

// Has reports whether f names all of g.
func (f BuildFields) Has(g BuildFields) bool { return f&g == g }

// Any reports whether f names any of g.
func (f BuildFields) Any(g BuildFields) bool { return f&g != 0 }

// ChangedBuildFields names the fields in which after differs from before: what a writer that
// read before and made after changed.
func ChangedBuildFields(before, after *Build) BuildFields {
	var f BuildFields
	add := func(field BuildFields, same bool) {
		if !same {
			f |= field
		}
	}
	add(FieldStatus, before.Status == after.Status)
	add(FieldProjectID, before.ProjectID == after.ProjectID)
	add(FieldBuildSettingID, before.BuildSettingID == after.BuildSettingID)
	add(FieldPlatform, before.Platform == after.Platform)
	add(FieldBuildType, before.BuildType == after.BuildType)
	add(FieldBranch, before.Branch == after.Branch)
	add(FieldCommit, before.Commit == after.Commit)
	add(FieldCommitMessage, before.CommitMessage == after.CommitMessage)
	add(FieldChangelist, before.Changelist == after.Changelist)
	add(FieldUEVersion, before.UEVersion == after.UEVersion)
	add(FieldTriggeredBy, before.TriggeredBy == after.TriggeredBy)
	add(FieldFailureReason, before.FailureReason == after.FailureReason)
	add(FieldAutoDeployStatus, before.AutoDeployStatus == after.AutoDeployStatus)
	add(FieldAutoDeployError, before.AutoDeployError == after.AutoDeployError)
	add(FieldAutoDeployAttempts, before.AutoDeployAttempts == after.AutoDeployAttempts)
	add(FieldAutoDeployNextAt, before.AutoDeployNextAt.Equal(after.AutoDeployNextAt))
	add(FieldStartedAt, sameTime(before.StartedAt, after.StartedAt))
	add(FieldFinishedAt, sameTime(before.FinishedAt, after.FinishedAt))
	add(FieldHeartbeatAt, sameTime(before.HeartbeatAt, after.HeartbeatAt))
	add(FieldHost, before.Host == after.Host)
	add(FieldHostCredentialHash, before.HostCredentialHash == after.HostCredentialHash)
	add(FieldAgentPool, before.AgentPool == after.AgentPool)
	add(FieldTaskToken, before.TaskToken == after.TaskToken)
	add(FieldBuildMinutes, before.BuildMinutes == after.BuildMinutes)
	add(FieldCache, before.Cache == after.Cache && before.CacheFrom == after.CacheFrom && before.CacheReason == after.CacheReason)
	add(FieldStages, sameStages(before.Stages, after.Stages))
	return f
}

// sameTime compares optional times: both nil, or both set to the same instant.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// buildFieldNames are the fields' names in messages, in bit order.
var buildFieldNames = []string{
	"status", "projectId", "buildSettingId", "platform", "buildType", "branch", "commit",
	"commitMessage", "changelist", "ueVersion", "triggeredBy", "failureReason", "autoDeployStatus",
	"autoDeployError", "autoDeployAttempts", "autoDeployNextAt", "startedAt", "finishedAt",
	"heartbeatAt", "host", "hostCredentialHash", "agentPool", "taskToken", "buildMinutes", "cache", "stages",
}

// Names lists the fields f names, for messages and tests.
func (f BuildFields) Names() []string {
	var out []string
	for i, n := range buildFieldNames {
		if f.Has(1 << i) {
			out = append(out, n)
		}
	}
	return slices.Clip(out)
}
