// Package agentapi is the protocol between kiln and a remote build host (a CodeBuild container or
// an EC2 Windows host launched for one build, or a studio's agent that claimed it): the host API
// the service serves under /host/v1/ (Server), the agents' claim under /agent/v1/ (Claims) and
// the JSON they speak. A host authenticates with the per-build credential
// it was given (package hostcred) and can do only that build's work: fetch its job, report
// heartbeats, log lines and progress, upload its artifact to the one key the service chooses
// through presigned part URLs, and complete or fail the build. The client side lives in
// agentapi/hostclient.
package agentapi

import (
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
)

// The environment of a build host (set by whoever launches it).
const (
	// EnvHostURL is the service's base URL the host API is under (no trailing /host/v1).
	EnvHostURL = "KILN_HOST_URL"
	// EnvHostCredential is the build's host credential.
	EnvHostCredential = "KILN_HOST_CREDENTIAL"
	// EnvBuildID is the id of the build the host runs (informational: the credential names it).
	EnvBuildID = "KILN_BUILD_ID"
	// EnvTaskToken is a Step Functions task token the host sends with each heartbeat, which the
	// API passes on (SendTaskHeartbeat), if whoever launched the host gave one: kiln's state
	// machine gives its CodeBuild hosts none (their state has no heartbeat timeout). Never log it.
	EnvTaskToken = "KILN_TASK_TOKEN"
)

// PathPrefix is where the host API is mounted.
const PathPrefix = "/host/v1/"

// StartRequest is POST /host/v1/start: the host reports what runs it (CodeBuild's build id) and
// asks for its job.
type StartRequest struct {
	HostRunID string `json:"hostRunId"`
}

// Job is everything a host needs to run its build, with source credentials minted for it.
type Job struct {
	Build   JobBuild   `json:"build"`
	Project JobProject `json:"project"`
	// UprojectPath is the .uproject to build (the setting's, else the project's; "" to find it).
	UprojectPath string `json:"uprojectPath"`
	// TimeLimitSeconds is how long the build may run, checkout to artifact (0: no limit).
	TimeLimitSeconds int64 `json:"timeLimitSeconds"`
	// MaxLogLines caps the build's log; ArtifactMaxBytes its artifact (0: no limit).
	MaxLogLines      int   `json:"maxLogLines"`
	ArtifactMaxBytes int64 `json:"artifactMaxBytes"`
	// Git is set for a GitHub project whose App installation could mint a token.
	Git *GitJob `json:"git,omitempty"`
	// Perforce is set for a Perforce project of an organization with saved credentials.
	Perforce *PerforceJob `json:"perforce,omitempty"`
	// BuildCache says the service keeps build caches for hosts (GET /host/v1/cache restores
	// the newest of the build's key, an upload of the object "cache" saves one): without it the
	// host builds without a cache and records nothing of one.
	BuildCache bool `json:"buildCache,omitempty"`
	// Failure, when set, is why the build cannot run (its project was deleted, GitHub is not
	// connected, no Perforce credentials): the host fails the build with it at once.
	Failure string `json:"failure,omitempty"`
}

// JobBuild is the build as the host needs it.
type JobBuild struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organizationId"`
	ProjectID      string `json:"projectId"`
	BuildSettingID string `json:"buildSettingId"`
	Platform       string `json:"platform"`
	BuildType      string `json:"buildType"`
	Branch         string `json:"branch"`
	// Commit (GitHub) or Changelist (Perforce) to build; "" for the branch's or stream's latest.
	Commit     string `json:"commit"`
	Changelist string `json:"changelist"`
	UEVersion  string `json:"ueVersion"`
	// Clean: the trigger asked for a clean build; the host ignores the build cache (and
	// replaces it if the build completes).
	Clean bool `json:"clean,omitempty"`
}

// JobProject is the project as the host needs it.
type JobProject struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	SourceControl string `json:"sourceControl"`
	RepoLink      string `json:"repoLink"`
	StreamPath    string `json:"streamPath"`
	// DepotPath is set for a project on a classic depot path (//depot/Game/...).
	DepotPath string `json:"depotPath,omitempty"`
}

// GitJob is how the host clones a GitHub repository: an installation token of the build's own,
// limited to the repository and to reading it, that expires.
type GitJob struct {
	CloneURL  string    `json:"cloneUrl"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// PerforceJob is the organization's saved Perforce login. Perforce cannot mint a ticket for one
// build without the user's password, so the saved ticket itself is handed on (see docs/hosts.md).
type PerforceJob struct {
	ServerURL   string `json:"serverUrl"`
	UserName    string `json:"userName"`
	Ticket      string `json:"ticket"`
	Fingerprint string `json:"fingerprint"`
}

// HeartbeatRequest is POST /host/v1/heartbeat (an empty body is an empty request).
type HeartbeatRequest struct {
	// TaskToken is the host's KILN_TASK_TOKEN, if it has one.
	TaskToken string `json:"taskToken,omitempty"`
}

// MaxTaskToken is the longest task token Step Functions issues (SendTaskHeartbeat's limit).
const MaxTaskToken = 2048

// ProgressRequest is POST /host/v1/progress: what the checkout found.
type ProgressRequest struct {
	Commit        string `json:"commit"`
	CommitMessage string `json:"commitMessage"`
	Changelist    string `json:"changelist"`
	// Cache says how the build started, once the host looked: "warm" from the cache build
	// CacheFrom saved, or "cold" for CacheReason; "" leaves what the build records as it is.
	Cache       string `json:"cache,omitempty"`
	CacheFrom   string `json:"cacheFrom,omitempty"`
	CacheReason string `json:"cacheReason,omitempty"`
}

// MaxCacheReason is the longest cold-build reason a host reports.
const MaxCacheReason = 1024

// LogLine is one line of a build's log.
type LogLine struct {
	Timestamp time.Time `json:"timestamp"`
	Level     string    `json:"level"`
	Message   string    `json:"message"`
}

// LogsRequest is POST /host/v1/logs: lines numbered first, first+1, ... (a repeat of numbers
// already written writes nothing).
type LogsRequest struct {
	First int64     `json:"first"`
	Lines []LogLine `json:"lines"`
}

// LastLogLine is GET /host/v1/logs/last.
type LastLogLine struct {
	Last int64 `json:"last"`
}

// CreateUploadRequest is the body of POST /host/v1/artifact/uploads: which of the build's objects
// is uploaded, UploadArtifact (also when empty) or UploadManifest. The service chooses its key.
// The later calls of the upload carry the same object as the query parameter "object".
type CreateUploadRequest struct {
	Object string `json:"object,omitempty"`
}

// The objects a host uploads for its build.
const (
	UploadArtifact = "artifact"
	UploadManifest = "manifest" // the artifact's size manifest (package manifest)
	// UploadCache is the build's build cache (package buildcache), under the object key of the
	// build's cache key and its id; POST /host/v1/cache/saved then makes it the key's newest.
	UploadCache = "cache"
)

// Upload is POST /host/v1/artifact/uploads: the upload the host sends its artifact to, under
// the key the service chose, in parts of PartSize bytes (all but the last).
type Upload struct {
	UploadID string `json:"uploadId"`
	Key      string `json:"key"`
	PartSize int64  `json:"partSize"`
	// Stream, when true, says that this service has no presigned parts (kiln serve's file
	// store): the host sends the whole artifact in one streamed PUT /host/v1/artifact instead,
	// and UploadID and PartSize are empty.
	Stream bool `json:"stream,omitempty"`
}

// StreamedArtifact answers PUT /host/v1/artifact: what the service stored, measured while it
// streamed through.
type StreamedArtifact struct {
	Size int64  `json:"size"`
	MD5  string `json:"md5"`
}

// PartURL is POST /host/v1/artifact/uploads/{id}/parts/{n}: a URL that takes one PUT of the part.
type PartURL struct {
	URL string `json:"url"`
}

// CompleteUploadRequest is POST /host/v1/artifact/uploads/{id}/complete.
type CompleteUploadRequest struct {
	Parts []artifacts.UploadedPart `json:"parts"`
}

// CacheEntry answers GET /host/v1/cache: the newest cache of the build's key (which the service
// derives from the build: a host reaches its own organization's caches only), saved by BuildID,
// Size compressed bytes. URL is a presigned GET of it, valid for minutes; when Stream is true the
// service has no presigned URLs and the host fetches it with GET /host/v1/cache/{buildId}
// through the service instead. Ref is the branch (or stream) of the cache's key: the build's own,
// or, when that has no cache yet, its project's default one, which the host restores read-only.
// No cache is not_found (404).
type CacheEntry struct {
	BuildID string `json:"buildId"`
	Ref     string `json:"ref,omitempty"`
	Size    int64  `json:"size"`
	URL     string `json:"url,omitempty"`
	Stream  bool   `json:"stream,omitempty"`
}

// CacheSaved answers POST /host/v1/cache/saved: the build's uploaded cache is now its key's
// newest (older ones removed), of Size compressed bytes.
type CacheSaved struct {
	Size int64 `json:"size"`
}

// CompleteRequest is POST /host/v1/complete: the stored artifact's size and hex MD5.
type CompleteRequest struct {
	Size int64  `json:"size"`
	MD5  string `json:"md5"`
}

// FailRequest is POST /host/v1/fail.
type FailRequest struct {
	Reason string `json:"reason"`
}

// BuildStatus answers complete and fail: the build's status afterwards.
type BuildStatus struct {
	Status        string `json:"status"`
	FailureReason string `json:"failureReason,omitempty"`
}

// ErrorBody is the error envelope of the host API, the same as the service's API.
type ErrorBody struct {
	Error     string            `json:"error"`
	Message   string            `json:"message"`
	RequestID string            `json:"requestId"`
	Fields    map[string]string `json:"fields,omitempty"`
}
