// Package runner runs claimed builds on this host through the agent: checkout, RunUAT,
// packaging and the artifact. Every change of a build's status goes through builds.Lifecycle.
package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/diskspace"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/manifest"
	"github.com/kilnbuild/kiln/shared/perforce"
)

// GitHubSource gives the runner what it needs from the GitHub App: where to clone a repository
// from and a token to clone it with.
type GitHubSource interface {
	CloneURL(ctx context.Context, installationID int64, fullName string) (string, error)
	InstallationToken(ctx context.Context, installationID int64) (string, error)
}

// PerforceConnector opens p4 clients with an organization's saved Perforce credentials.
type PerforceConnector interface {
	Connect(ctx context.Context, org *kiln.Organization) (*perforce.Client, error)
}

// EngineResolver finds the RunUAT.sh of the engine a version builds with.
type EngineResolver interface {
	Resolve(ctx context.Context, version string) (installed string, ok bool, err error)
	RunUAT(installed string) string
}

// LogWriter keeps build logs.
type LogWriter = builds.LogWriter

// Store is what the runner reads.
type Store interface {
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
	GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error)
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
}

// Runner runs one claimed (running) build on this host: checkout, RunUAT, packaging, and the
// artifact, recording each step on the build through the lifecycle.
type Runner struct {
	Store     Store
	Lifecycle Lifecycle
	Sources   Sources
	Logs      LogWriter
	Steps     *buildsteps.Steps
	Artifacts artifacts.Store
	// Caches keeps build caches between builds (nil: none; builds then record no cache state).
	Caches  Caches
	Engines EngineResolver
	// WorkDir holds workspaces (reused per project and branch) and staging directories.
	WorkDir string
	Logger  *slog.Logger
	Now     func() time.Time
	// TimeLimit is how long a build may run, checkout to artifact (KILN_BUILD_TIMEOUT); past it
	// every process of the build is stopped and the build fails with "time limit". 0: no limit.
	TimeLimit time.Duration

	// MaxLogLines caps a build's log (0: DefaultMaxLogLines); ArtifactMax caps its artifact's
	// bytes (0: no limit).
	MaxLogLines int
	ArtifactMax int64
	// DiskReserve is the free space the data volume (WorkDir's) keeps (KILN_DISK_RESERVE): a
	// build does not start with less free, and is stopped when free space falls below it. 0: no
	// reserve.
	DiskReserve int64

	workspaces workspaceLocks
	// freeSpace and diskEvery replace diskspace.Of and diskEvery in tests.
	freeSpace func(string) (diskspace.Space, error)
	diskEvery time.Duration
}

// ReasonTimeLimit is the failureReason of a build that ran past its time limit.
const ReasonTimeLimit = "time limit"

// errTimeLimit is the cause of a build's context ending at its time limit.
var errTimeLimit = errors.New("the build ran past its time limit")

// failure is a build failure with the reason the customer sees.
type failure struct{ reason string }

func (f failure) Error() string { return f.reason }

func fail(format string, args ...any) error { return failure{reason: fmt.Sprintf(format, args...)} }

// Run runs a running build to its end: complete with an artifact, or failed with a reason. If
// ctx ends first (the build was cancelled or superseded, or the service is stopping), the
// build's status is left to whoever ended it; ErrInterrupted is returned when nobody did.
func (r *Runner) Run(ctx context.Context, b *kiln.Build) error {
	outer := ctx
	p, st, err := r.load(ctx, b)
	limit := r.TimeLimit
	if st != nil {
		limit = st.TimeLimit(r.TimeLimit) // the setting may lower the service's limit
	}
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, limit, errTimeLimit)
		defer cancel()
	}
	ctx, stopWatching := r.watchDisk(ctx)
	defer stopWatching()
	rep := &reporter{logs: r.Logs, build: b, now: r.now, logger: r.log(), maxLines: cmp.Or(r.MaxLogLines, DefaultMaxLogLines)}
	stopFlushing := rep.flushPeriodically(ctx)
	var pkg buildsteps.PackageOutput
	if err == nil {
		pkg, err = r.run(ctx, b, p, st, rep)
	}
	stopFlushing()
	var low diskLow
	if outer.Err() == nil && errors.As(context.Cause(ctx), &low) {
		rep.Log(context.WithoutCancel(ctx), buildsteps.LogLine{Time: r.now(), Level: buildsteps.LevelError, Message: "kiln: " + low.reason})
	}
	if outer.Err() == nil && errors.Is(context.Cause(ctx), errTimeLimit) {
		rep.Log(context.WithoutCancel(ctx), buildsteps.LogLine{Time: r.now(), Level: buildsteps.LevelError, Message: fmt.Sprintf(
			"kiln: the build ran longer than its time limit of %s; every process of the build was stopped", limit)})
	}
	rep.close(context.WithoutCancel(ctx)) // the whole log is written before the build ends
	if err == nil {
		err = r.finishComplete(ctx, b, pkg)
	}
	if err == nil {
		return nil
	}
	var f failure
	var af *buildsteps.Failure
	switch {
	case outer.Err() == nil && errors.Is(context.Cause(ctx), errTimeLimit):
		return r.finishFailed(context.WithoutCancel(ctx), b, ReasonTimeLimit)
	case outer.Err() == nil && errors.As(context.Cause(ctx), &low):
		return r.finishFailed(context.WithoutCancel(ctx), b, low.reason)
	case ctx.Err() != nil:
		r.noteEndedElsewhere(context.WithoutCancel(ctx), b)
		return ctx.Err()
	case errors.As(err, &f):
		return r.finishFailed(context.WithoutCancel(ctx), b, f.reason)
	case errors.As(err, &af):
		return r.finishFailed(context.WithoutCancel(ctx), b, af.Reason)
	default:
		r.log().ErrorContext(ctx, "build failed unexpectedly", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		return r.finishFailed(context.WithoutCancel(ctx), b, "internal error in kiln while running the build")
	}
}

// load reads the build's project and setting; a deleted one fails the build.
func (r *Runner) load(ctx context.Context, b *kiln.Build) (*kiln.Project, *kiln.BuildSetting, error) {
	p, err := r.Store.GetProject(ctx, b.OrganizationID, b.ProjectID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, nil, fail("the project was deleted before the build ran")
	} else if err != nil {
		return nil, nil, err
	}
	st, err := r.Store.GetBuildSetting(ctx, b.OrganizationID, b.ProjectID, b.BuildSettingID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, nil, fail("the build setting was deleted before the build ran")
	} else if err != nil {
		return nil, nil, err
	}
	return p, st, nil
}

func (r *Runner) run(ctx context.Context, b *kiln.Build, p *kiln.Project, st *kiln.BuildSetting, rep *reporter) (buildsteps.PackageOutput, error) {
	var none buildsteps.PackageOutput
	installed, ok, err := r.Engines.Resolve(ctx, b.UEVersion)
	if err != nil {
		return none, err
	}
	if !ok {
		return none, fail("%s", r.noEngine(ctx, b))
	}
	if reason, low := r.lowDisk(ctx, "the build did not start"); low {
		return none, fail("%s", reason)
	}
	workspace := filepath.Join(r.WorkDir, "workspaces", b.OrganizationID, p.ID, WorkspaceKey(b.Branch))
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return none, err
	}
	release, err := r.workspaces.acquire(ctx, workspace, func() {
		rep.Log(ctx, buildsteps.LogLine{Time: r.now(), Level: buildsteps.LevelInfo, Message: "Waiting for another build of " + b.Branch + " to finish with the workspace"})
	})
	if err != nil {
		return none, err
	}
	defer release()
	defer r.logWorkspaceSize(ctx, workspace, b.OrganizationID, p.ID, b.Branch)
	// After the staging directory's removal, before another build may take the workspace.
	defer r.dropWorkspace(ctx, workspace, slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID))
	in := buildsteps.CheckoutInput{Workspace: workspace}
	if p.SourceControl == kiln.SourcePerforce {
		in.Perforce, err = r.Sources.Perforce(ctx, b, p)
	} else {
		in.Git, err = r.Sources.Git(ctx, b, p)
	}
	if err != nil {
		return none, err
	}
	co, err := r.Steps.Checkout(ctx, in, rep)
	if err != nil {
		return none, err
	}
	b.Commit, b.CommitMessage = co.Commit, co.CommitMessage
	if p.SourceControl == kiln.SourcePerforce {
		b.Changelist = co.Commit
	}
	if err := r.save(ctx, b); err != nil {
		return none, err
	}
	uproject := st.UprojectPath
	if uproject == "" {
		uproject = p.UprojectPath
	}
	// The build cache holds Intermediate/ and DerivedDataCache/, beside the .uproject, in a
	// directory opened without following links (a committed link there fails the build now).
	projectDir, err := openProjectDir(co.Dir, uproject)
	if err != nil {
		return none, err
	}
	if projectDir != nil {
		defer projectDir.Close()
	}
	marker := workspace + ".cache"
	if err := r.warmUp(ctx, b, p, projectDir, marker, rep); err != nil {
		return none, err
	}
	// The build's own directory: RunUAT's archive, and its $HOME and $TMPDIR.
	staging := filepath.Join(r.WorkDir, "staging", b.ID)
	if err := os.RemoveAll(staging); err != nil {
		return none, err
	}
	defer os.RemoveAll(staging)
	out, err := r.Steps.Build(ctx, buildsteps.BuildInput{
		ProjectDir: co.Dir, UprojectPath: uproject, Platform: b.Platform, BuildType: b.BuildType,
		RunUAT: r.Engines.RunUAT(installed), ArchiveDir: filepath.Join(staging, "archive"),
		ScratchDir: filepath.Join(staging, "scratch"), Name: b.ID,
	}, rep)
	if err != nil {
		return none, err
	}
	key := b.OrganizationID + "/" + b.ID + ".tar.gz"
	pkg, err := r.Steps.Package(ctx, buildsteps.PackageInput{StagedDir: out.StagedDir, TopName: topName(out.ProjectName, b), Key: key, MaxSize: r.ArtifactMax, ManifestKey: manifest.Key(key)}, rep)
	if err != nil {
		return none, err
	}
	r.saveCache(ctx, b, co.Dir, uproject, marker, rep)
	return pkg, nil
}

// noEngine says that this host lacks the build's engine, why the build asked for that one, and
// which this host has, when it can list them.
func (r *Runner) noEngine(ctx context.Context, b *kiln.Build) string {
	msg := "no build host provides Unreal Engine " + b.UEVersion
	if b.UEVersionSource == kiln.UEVersionFromUproject {
		msg += " (the .uproject's EngineAssociation)"
	}
	if l, ok := r.Engines.(interface {
		Versions(ctx context.Context) ([]string, error)
	}); ok {
		if vs, err := l.Versions(ctx); err == nil {
			list := "none"
			if len(vs) > 0 {
				list = strings.Join(vs, ", ")
			}
			msg += "; installed: " + list
		}
	}
	return msg
}

// finishComplete records the artifact and completes the build. If the build ended meanwhile
// (cancelled, superseded), the artifact is removed again.
func (r *Runner) finishComplete(ctx context.Context, b *kiln.Build, pkg buildsteps.PackageOutput) error {
	ctx = context.WithoutCancel(ctx)
	a := &kiln.Artifact{
		BuildID: b.ID, OrganizationID: b.OrganizationID, ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID,
		Platform: b.Platform, BuildType: b.BuildType, UEVersion: b.UEVersion, Branch: b.Branch, Commit: b.Commit,
		Key: pkg.Key, SizeBytes: pkg.Size, ChecksumMD5: pkg.MD5, CreatedAt: r.now(),
	}
	done, err := r.Lifecycle.Complete(ctx, a)
	if kiln.IsCode(err, kiln.EInvalidState) {
		// It was ended meanwhile; that stands, and its artifact goes.
		for _, key := range []string{manifest.Key(a.Key), a.Key} {
			if err := r.Artifacts.Delete(ctx, key); err != nil {
				r.log().WarnContext(ctx, "discard artifact", slog.String("build_id", a.BuildID), slog.String("key", key), slog.String("error", err.Error()))
			}
		}
		r.noteEndedElsewhere(ctx, b)
		return nil
	}
	if err != nil {
		return err
	}
	*b = *done
	return nil
}

// finishFailed fails a running build with reason (its lifecycle ends the log with why, now that
// the runner has written its last line), unless it already ended.
func (r *Runner) finishFailed(ctx context.Context, b *kiln.Build, reason string) error {
	failed, err := r.Lifecycle.Fail(ctx, b.OrganizationID, b.ID, reason)
	if kiln.IsCode(err, kiln.EInvalidState) {
		r.noteEndedElsewhere(ctx, b)
		return nil
	}
	if err != nil {
		return err
	}
	*b = *failed
	return nil
}

// noteEndedElsewhere ends the log of a build stopped because it was ended elsewhere (cancelled,
// superseded, a silent host) with why, now that the runner wrote its last line. A build still
// running is being interrupted by a stop: whoever fails it writes that.
func (r *Runner) noteEndedElsewhere(ctx context.Context, b *kiln.Build) {
	if cur, err := r.Store.GetBuild(ctx, b.OrganizationID, b.ID); err == nil && cur.Status.Terminal() {
		builds.WriteEndLine(ctx, r.Logs, cur, r.now(), r.log())
	}
}

// save records the commit the build checked out while it runs.
func (r *Runner) save(ctx context.Context, b *kiln.Build) error {
	_, err := r.Lifecycle.Progress(ctx, b.OrganizationID, b.ID, func(cur *kiln.Build) {
		cur.Commit, cur.CommitMessage, cur.Changelist = b.Commit, b.CommitMessage, b.Changelist
	})
	if kiln.IsCode(err, kiln.EInvalidState) {
		return context.Canceled // ended elsewhere; the workflow stops us
	}
	return err
}

// WorkspaceKey names a workspace directory (and Perforce client) after a branch, safely: a hash,
// so any branch name works.
func WorkspaceKey(branch string) string {
	sum := sha256.Sum256([]byte(branch))
	return hex.EncodeToString(sum[:8])
}

// topName is the single top-level directory of the artifact: <Project>-<Platform>-<BuildType>.
func topName(project string, b *kiln.Build) string {
	if project == "" {
		project = "Build"
	}
	return project + "-" + string(b.Platform) + "-" + string(b.BuildType)
}

func (r *Runner) now() time.Time { return kiln.Now(r.Now) }

func (r *Runner) log() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
