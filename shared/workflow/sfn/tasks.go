package sfn

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// HostStartGrace is how long after its claim a CodeBuild host may take to start: RunOnCodeBuild's
// retries of a refused StartBuild, CodeBuild's queue (its queued timeout ends a longer wait) and
// the host's start (the image pull). The build stays pending meanwhile (ReserveHost); CodeBuild's
// timeout for the host adds it to the build's time limit (HostTimeoutMinutes). From the host's
// start on, its silence counts by kiln.HeartbeatTimeout (the schedule tick).
const HostStartGrace = StartBuildRetryWait + HostQueuedTimeoutMinutes*time.Minute + hostImagePull

// CodeBuild's bounds on a build's timeout, in minutes.
const (
	codeBuildMinMinutes = 5
	codeBuildMaxMinutes = MaxExecutionSeconds / 60 // CodeBuild allows 36 h; the execution lasts 25 h
)

// Failure reasons the tasks set.
const (
	// ReasonWin64: this deployment runs no Windows hosts of its own (Tasks.HostedWindows false);
	// an organization's agents do.
	ReasonWin64       = "Win64 builds need an agent pool: set agentPool on the build setting and run a kiln agent on Windows"
	ReasonHostNoReply = "the build host ended without reporting a result"
	ReasonHostLost    = "host lost: "
	// ReasonHostSilent is the reason of a build whose host task timed out on its heartbeats
	// (States.HeartbeatTimeout).
	ReasonHostSilent = ReasonHostLost + "the build host stopped reporting"
	// ReasonNoAgent is the reason of a build for an agent pool no agent claimed within the
	// WaitForAgent state's HeartbeatSeconds (followed by the pool's name).
	ReasonNoAgent = ReasonHostLost + "no agent claimed the build in pool "
	// ReasonTimeLimit is the reason of a build that ran past its time limit, as on one machine.
	ReasonTimeLimit = "time limit"
)

// TaskStore is what the tasks read (and the await task writes: the build's task token).
type TaskStore interface {
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
	UpdateBuild(ctx context.Context, b *kiln.Build, expected kiln.BuildStatus, fields kiln.BuildFields) error
	GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error)
}

// Tasks is the task Lambda: the claim, finish and unsupported steps of a build's execution.
type Tasks struct {
	Store     TaskStore
	Lifecycle *builds.Lifecycle
	// Images maps an engine version to the build host image that holds it.
	Images map[string]string
	// HostURL is the API's public base URL the host reports to.
	HostURL string
	// TimeLimit is the deployment's build time limit (a setting may lower it).
	TimeLimit time.Duration
	// HostedWindows: the deployment runs kiln's own Windows hosts (KILN_WINDOWS_HOST_GROUP is
	// set), so a Win64 build without an agent pool waits in kiln.HostedPoolWin64 for one of them.
	HostedWindows bool
	// HostedLinuxVersions are the engine versions kiln's own Linux hosts provide (their AMI's
	// engines; KILN_LINUX_HOST_ENGINES, set with KILN_LINUX_HOST_GROUP): a Linux build of one
	// of them without an agent pool waits in kiln.HostedPoolLinux for one of those hosts rather
	// than running on a CodeBuild image. Empty: Linux builds run on CodeBuild.
	HostedLinuxVersions []string
	Logger              *slog.Logger
	// Slots says whether the build may take one of its organization's slots of running builds
	// (plans.Plans); nil: always. A build without one waits (HostWait) and claims again.
	Slots Slots
	// Credentials keeps a CodeBuild host's credential; the claim answers only its name.
	Credentials HostCredentialStore
	// Capacity says whether a build may take a CodeBuild host now: the account's quota of
	// concurrent CodeBuild builds, shared between organizations by turns (*Capacity); nil:
	// always. A build without one waits pending (HostWait) and claims again.
	Capacity Slots
	// SlotWait is how long a build pending for so long waits for a slot before its next claim
	// (nil: SlotWait; tests shorten it). At least a second.
	SlotWait func(pendingFor time.Duration) time.Duration
	// Now is the clock (nil: the time now).
	Now func() time.Time
}

// Slots tells whether a pending build may start now under its organization's concurrency limit.
type Slots interface {
	MayRun(ctx context.Context, b *kiln.Build) (bool, error)
}

// Handle runs one task. Only the claim answers (where the build runs); the others answer nil.
// An error AWS throttling caused is a ThrottledError (ErrorThrottled), which the definition
// retries with a backoff.
func (t *Tasks) Handle(ctx context.Context, in TaskInput) (*ClaimOutput, error) {
	out, err := t.handle(ctx, in)
	return out, asThrottled(err)
}

func (t *Tasks) handle(ctx context.Context, in TaskInput) (*ClaimOutput, error) {
	if in.OrganizationID == "" || in.BuildID == "" {
		return nil, fmt.Errorf("task %q: the input names no build", in.Task)
	}
	switch in.Task {
	case TaskClaim:
		return t.claim(ctx, in)
	case TaskFinish:
		return nil, t.finish(ctx, in)
	case TaskAwait:
		return nil, t.await(ctx, in)
	case TaskUnsupported:
		if in.Reason == "" {
			return nil, fmt.Errorf("task unsupported of build %s: no reason given", in.BuildID)
		}
		return nil, t.fail(ctx, in, in.Reason)
	}
	return nil, fmt.Errorf("task %q is not a task of the build's workflow", in.Task)
}

// claim decides where the build runs and, for CodeBuild, reserves it for the host with a new
// credential the host gets in its environment: the credential goes to a parameter, the answer
// (the execution's data) names the parameter only. The build stays pending until its host starts.
func (t *Tasks) claim(ctx context.Context, in TaskInput) (*ClaimOutput, error) {
	b, err := t.Store.GetBuild(ctx, in.OrganizationID, in.BuildID)
	if err != nil {
		return nil, fmt.Errorf("claim build %s: %w", in.BuildID, err)
	}
	if b.Status.Terminal() {
		return &ClaimOutput{Kind: HostBuildEnded}, nil // cancelled or superseded before its claim
	}
	if b.AgentPool != "" {
		return &ClaimOutput{Kind: HostAgent}, nil // an agent of the pool claims it through the API
	}
	if b.Platform == kiln.PlatformWin64 {
		if !t.HostedWindows {
			return &ClaimOutput{Kind: HostUnsupported, Reason: ReasonWin64}, nil
		}
		if wait, err := t.waitForSlot(ctx, b); wait != nil || err != nil {
			return wait, err
		}
		return t.toHostedPool(ctx, b, kiln.HostedPoolWin64)
	}
	if b.Platform == kiln.PlatformLinux && t.hostedLinux(b.UEVersion) {
		if wait, err := t.waitForSlot(ctx, b); wait != nil || err != nil {
			return wait, err
		}
		return t.toHostedPool(ctx, b, kiln.HostedPoolLinux)
	}
	var image string
	for _, v := range engines.Candidates(b.UEVersion) { // "5.3.2" runs on the 5.3 image
		if image = t.Images[v]; image != "" {
			break
		}
	}
	if image == "" {
		return &ClaimOutput{Kind: HostUnsupported, Reason: fmt.Sprintf(
			"this deployment has no build host image for Unreal Engine %q, the engine version of build setting %s", b.UEVersion, b.BuildSettingID)}, nil
	}
	if wait, err := t.waitForSlot(ctx, b); wait != nil || err != nil {
		return wait, err
	}
	if wait, err := t.waitFor(ctx, b, t.Capacity); wait != nil || err != nil {
		return wait, err // the account's CodeBuild builds are at its quota: its turn comes
	}
	limit := t.TimeLimit
	setting, err := t.Store.GetBuildSetting(ctx, b.OrganizationID, b.ProjectID, b.BuildSettingID)
	switch {
	case err == nil:
		limit = setting.TimeLimit(t.TimeLimit)
	case !kiln.IsCode(err, kiln.ENotFound): // a deleted setting keeps the deployment's limit
		return nil, fmt.Errorf("claim build %s: read its setting: %w", b.ID, err)
	}
	credential, hash, err := hostcred.New(b.OrganizationID, b.ID)
	if err != nil {
		return nil, fmt.Errorf("claim build %s: %w", b.ID, err)
	}
	// Stored before the reservation: a reserved build's host that cannot get its credential
	// fails at once (CodeBuild fails its build), and the build with it.
	param, err := t.Credentials.put(ctx, b.ID, credential)
	if err != nil {
		return nil, fmt.Errorf("claim build %s: %w", b.ID, err)
	}
	// The build stays pending while it waits for its host (CodeBuild's queue, the account's
	// quota, the image pull): the host's start makes it running (agentapi's start).
	claimed, err := t.Lifecycle.ReserveHost(ctx, b.OrganizationID, b.ID, HostCodeBuild, hash)
	if err != nil {
		t.Credentials.removeName(ctx, b.ID, param, t.log()) // no host gets it
	}
	if kiln.IsCode(err, kiln.EInvalidState) && claimed == nil {
		if now, gerr := t.Store.GetBuild(ctx, b.OrganizationID, b.ID); gerr == nil && now.Status.Terminal() {
			return &ClaimOutput{Kind: HostBuildEnded}, nil // it ended between reading and claiming
		}
	}
	if err != nil {
		return nil, fmt.Errorf("claim build %s: %w", b.ID, err)
	}
	minutes := HostTimeoutMinutes(limit)
	return &ClaimOutput{
		Kind: HostCodeBuild, Image: image,
		TimeoutMinutes: minutes, WaitSeconds: t.slotWaitSeconds(b), // if CodeBuild refuses it for its quota
		HostURL: t.HostURL, CredentialParameter: param, BuildID: claimed.ID,
	}, nil
}

// waitForSlot answers HostWait while the build's organization has no free slot of running builds
// on the service's own hosts (CodeBuild and kiln's hosted Windows and Linux hosts), nil when it may take one.
func (t *Tasks) waitForSlot(ctx context.Context, b *kiln.Build) (*ClaimOutput, error) {
	return t.waitFor(ctx, b, t.Slots)
}

// waitFor answers HostWait, with how long to wait, while slots says the build may not start
// (nil slots: it may).
func (t *Tasks) waitFor(ctx context.Context, b *kiln.Build, slots Slots) (*ClaimOutput, error) {
	if slots == nil {
		return nil, nil
	}
	ok, err := slots.MayRun(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("claim build %s: %w", b.ID, err)
	}
	if !ok {
		return &ClaimOutput{Kind: HostWait, WaitSeconds: t.slotWaitSeconds(b)}, nil
	}
	return nil, nil
}

// slotWaitSeconds is how long the build waits before its next claim (SlotWait), in whole seconds.
func (t *Tasks) slotWaitSeconds(b *kiln.Build) int {
	slotWait := SlotWait
	if t.SlotWait != nil {
		slotWait = t.SlotWait
	}
	return max(int(slotWait(kiln.Now(t.Now).Sub(b.CreatedAt))/time.Second), 1)
}

// hostedLinux reports whether kiln's own Linux hosts provide the engine version ("5.4.2" runs
// on hosts of 5.4, as on the 5.4 image).
func (t *Tasks) hostedLinux(version string) bool {
	for _, v := range engines.Candidates(version) {
		if slices.Contains(t.HostedLinuxVersions, v) {
			return true
		}
	}
	return false
}

// toHostedPool puts a build without a pool into one of kiln's hosted pools (its platform's): it
// then waits for one of kiln's hosts as a pool's build waits for an agent (WaitForAgent).
func (t *Tasks) toHostedPool(ctx context.Context, b *kiln.Build, pool string) (*ClaimOutput, error) {
	now, err := t.Lifecycle.AssignPool(ctx, b.OrganizationID, b.ID, pool)
	if kiln.IsCode(err, kiln.EInvalidState) && now != nil && now.Status.Terminal() {
		return &ClaimOutput{Kind: HostBuildEnded}, nil // it ended (cancelled, superseded) meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("claim build %s: put it in the hosted pool: %w", b.ID, err)
	}
	t.log().InfoContext(ctx, "build waits for one of kiln's hosted hosts", slog.String("pool", pool),
		slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID))
	return &ClaimOutput{Kind: HostAgent}, nil
}

// HostTimeoutMinutes is CodeBuild's timeout for a host whose build may run limit (0: none): the
// limit and the host's start, within what CodeBuild allows. The host's own time limit ends
// the build first; this is the backstop for a host that cannot report at all.
func HostTimeoutMinutes(limit time.Duration) int {
	if limit <= 0 {
		return codeBuildMaxMinutes
	}
	minutes := int((limit + HostStartGrace + time.Minute - 1) / time.Minute)
	return min(max(minutes, codeBuildMinMinutes), codeBuildMaxMinutes)
}

// finish fails a build its host left running: after a caught error, with why the host ended.
// Its host's credential parameter, if any, is deleted: the host ran and ended.
func (t *Tasks) finish(ctx context.Context, in TaskInput) error {
	b, err := t.Store.GetBuild(ctx, in.OrganizationID, in.BuildID)
	if err != nil { // the failure below reads it again and says why
		t.log().WarnContext(ctx, "finish: read the build", slog.String("build_id", in.BuildID), slog.String("error", err.Error()))
		b = nil
	}
	t.Credentials.remove(ctx, b, t.log())
	reason := ReasonHostNoReply
	if in.Error != nil {
		reason = hostEndedReason(*in.Error)
		if in.Error.Error == "States.HeartbeatTimeout" && b != nil && b.Status == kiln.StatusPending && b.AgentPool != "" {
			reason = ReasonNoAgent + b.AgentPool
		}
	}
	return t.fail(ctx, in, reason)
}

// hostEndedReason says why a host's run failed, from what the Catch caught.
func hostEndedReason(e TaskError) string {
	switch e.Error {
	case "States.Timeout":
		return ReasonTimeLimit
	case "States.HeartbeatTimeout":
		return ReasonHostSilent
	}
	var cause struct {
		Build struct {
			ID          string `json:"Id"`
			BuildStatus string `json:"BuildStatus"`
		} `json:"Build"`
	}
	if json.Unmarshal([]byte(e.Cause), &cause) == nil && cause.Build.BuildStatus != "" {
		if cause.Build.BuildStatus == "TIMED_OUT" {
			return ReasonTimeLimit
		}
		return ReasonHostLost + "its CodeBuild build ended " + cause.Build.BuildStatus
	}
	detail := e.Error
	if e.Cause != "" {
		detail += ": " + e.Cause
	}
	if len(detail) > 300 {
		detail = detail[:300] + "…"
	}
	return ReasonHostLost + detail
}

// fail fails the build if it has not ended yet; a build that already ended is a success.
func (t *Tasks) fail(ctx context.Context, in TaskInput, reason string) error {
	_, err := t.Lifecycle.Fail(ctx, in.OrganizationID, in.BuildID, reason)
	if kiln.IsCode(err, kiln.EInvalidState) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("task %s of build %s: %w", in.Task, in.BuildID, err)
	}
	t.log().InfoContext(ctx, "build failed by its workflow", slog.String("build_id", in.BuildID),
		slog.String("org_id", in.OrganizationID), slog.String("reason", reason))
	return nil
}

func (t *Tasks) log() *slog.Logger {
	if t.Logger != nil {
		return t.Logger
	}
	return slog.Default()
}

// BuildEndedError is what the await task returns for a build that ended before its token was
// stored: nothing would answer the token, so the state fails at once (its Catch goes to
// HostEnded, which finds the build ended).
type BuildEndedError struct{ BuildID string }

func (e *BuildEndedError) Error() string {
	return fmt.Sprintf("build %s ended before its agent's task token was stored", e.BuildID)
}

// await stores the WaitForAgent state's task token on the build, through the lifecycle (a
// partial write of the token: an agent's claim or heartbeat at the same time keeps it).
func (t *Tasks) await(ctx context.Context, in TaskInput) error {
	if in.TaskToken == "" {
		return fmt.Errorf("task await of build %s: no task token given", in.BuildID)
	}
	b, err := t.Lifecycle.StoreTaskToken(ctx, in.OrganizationID, in.BuildID, in.TaskToken)
	if kiln.IsCode(err, kiln.EInvalidState) && b != nil && b.Status.Terminal() {
		return &BuildEndedError{BuildID: b.ID}
	}
	if err != nil {
		return fmt.Errorf("task await of build %s: %w", in.BuildID, err)
	}
	return nil // stored: the write that ends the build carries it to the API's listener
}
