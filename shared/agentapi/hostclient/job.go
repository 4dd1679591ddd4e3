package hostclient

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/runner"
)

// job is the host's one build as the runner sees it: its store (the job's build, project and
// setting), its lifecycle and its sources, all answered from the job or by the service.
type job struct {
	c         *Client
	hostRunID string
	p4        *perforce.Verifier

	mu  sync.Mutex
	cur agentapi.Job
	// reported is what the host last reported of the build beyond the job (its commit message,
	// how it started), so that each report repeats it.
	reported agentapi.ProgressRequest
}

var (
	_ runner.Store     = (*job)(nil)
	_ runner.Lifecycle = (*job)(nil)
	_ runner.Sources   = (*job)(nil)
)

func (j *job) get() agentapi.Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cur
}

// build is the job's build, running.
func (j *job) build() *kiln.Build {
	j.mu.Lock()
	jb, rep := j.cur.Build, j.reported
	j.mu.Unlock()
	return &kiln.Build{ID: jb.ID, OrganizationID: jb.OrganizationID, ProjectID: jb.ProjectID, BuildSettingID: jb.BuildSettingID,
		Status: kiln.StatusRunning, Platform: kiln.Platform(jb.Platform), BuildType: kiln.BuildType(jb.BuildType),
		Branch: jb.Branch, Commit: jb.Commit, Changelist: jb.Changelist, UEVersion: jb.UEVersion, Clean: jb.Clean,
		CommitMessage: rep.CommitMessage, Cache: kiln.CacheState(rep.Cache), CacheFrom: rep.CacheFrom, CacheReason: rep.CacheReason}
}

// The store: the runner reads the build, its project and its setting.

func (j *job) GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error) {
	return j.build(), nil
}

func (j *job) GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error) {
	cur := j.get()
	p := cur.Project
	return &kiln.Project{ID: p.ID, OrganizationID: cur.Build.OrganizationID, Name: p.Name, SourceControl: kiln.SourceControl(p.SourceControl),
		RepoLink: p.RepoLink, StreamPath: p.StreamPath, DepotPath: p.DepotPath, UprojectPath: cur.UprojectPath}, nil
}

// GetBuildSetting answers a setting without a time limit of its own: the job's limit is the
// setting's and the service's already (Runner.TimeLimit).
func (j *job) GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error) {
	cur := j.get()
	return &kiln.BuildSetting{ID: cur.Build.BuildSettingID, OrganizationID: cur.Build.OrganizationID, ProjectID: projectID,
		Platform: kiln.Platform(cur.Build.Platform), BuildType: kiln.BuildType(cur.Build.BuildType), UprojectPath: cur.UprojectPath}, nil
}

// The lifecycle: calls to the service.

func (j *job) Progress(ctx context.Context, orgID, id string, edit func(b *kiln.Build)) (*kiln.Build, error) {
	b := j.build()
	edit(b)
	rep := agentapi.ProgressRequest{Commit: b.Commit, CommitMessage: b.CommitMessage, Changelist: b.Changelist,
		Cache: string(b.Cache), CacheFrom: b.CacheFrom, CacheReason: b.CacheReason}
	if err := j.c.Progress(ctx, rep); err != nil {
		return nil, err
	}
	j.mu.Lock()
	j.cur.Build.Commit, j.cur.Build.Changelist, j.reported = b.Commit, b.Changelist, rep
	j.mu.Unlock()
	return b, nil
}

func (j *job) Complete(ctx context.Context, a *kiln.Artifact) (*kiln.Build, error) {
	st, err := j.c.Complete(ctx, a.SizeBytes, a.ChecksumMD5)
	if err != nil {
		return nil, err
	}
	b := j.build()
	b.Status = kiln.BuildStatus(st.Status)
	return b, nil
}

func (j *job) Fail(ctx context.Context, orgID, id, reason string) (*kiln.Build, error) {
	st, err := j.c.Fail(ctx, reason)
	if err != nil {
		return nil, err
	}
	b := j.build()
	b.Status, b.FailureReason = kiln.BuildStatus(st.Status), st.FailureReason
	return b, nil
}

// The sources: what the service minted for the build.

// tokenMargin is how long before it expires a GitHub token is renewed (by asking for the job
// again) before a git call.
const tokenMargin = 5 * time.Minute

func (j *job) Git(ctx context.Context, b *kiln.Build, p *kiln.Project) (*buildsteps.GitSource, error) {
	g := j.get().Git
	if g == nil {
		return nil, errors.New("the job has no GitHub source")
	}
	return &buildsteps.GitSource{CloneURL: g.CloneURL, Branch: b.Branch, Commit: b.Commit, Token: j.gitToken}, nil
}

func (j *job) gitToken(ctx context.Context) (string, error) {
	if g := j.get().Git; g != nil && time.Until(g.ExpiresAt) > tokenMargin {
		return g.Token, nil
	}
	fresh, err := j.c.Start(ctx, j.hostRunID)
	if err != nil {
		return "", err
	}
	if fresh.Git == nil {
		return "", &buildsteps.Failure{Stage: buildsteps.StageSync, Reason: fresh.Failure}
	}
	j.mu.Lock()
	j.cur.Git = fresh.Git
	j.mu.Unlock()
	return fresh.Git.Token, nil
}

func (j *job) Perforce(ctx context.Context, b *kiln.Build, p *kiln.Project) (*buildsteps.PerforceSource, error) {
	pj := j.get().Perforce
	if pj == nil {
		return nil, errors.New("the job has no Perforce source")
	}
	if j.p4 == nil {
		return nil, &buildsteps.Failure{Stage: buildsteps.StageSync, Reason: "Perforce is not available on this build host"}
	}
	c, err := j.p4.Open(ctx, b.OrganizationID, perforce.Credentials{
		ServerURL: pj.ServerURL, UserName: pj.UserName, Ticket: pj.Ticket, Fingerprint: pj.Fingerprint})
	var ke *kiln.Error
	if errors.As(err, &ke) {
		return nil, &buildsteps.Failure{Stage: buildsteps.StageSync, Reason: "sync failed: " + ke.Message, Err: err}
	} else if err != nil {
		return nil, err
	}
	return &buildsteps.PerforceSource{Client: c, WorkspaceName: "kiln-" + p.ID + "-" + runner.WorkspaceKey(b.Branch),
		Stream: b.Branch, Changelist: b.Changelist, Classic: p.DepotPath != ""}, nil
}
