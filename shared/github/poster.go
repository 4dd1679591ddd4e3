package github

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// statusClient is what StatusPoster asks of GitHub (a *Client).
type statusClient interface {
	CanWriteStatuses(ctx context.Context, installationID int64) (bool, error)
	CreateStatus(ctx context.Context, installationID int64, fullName, sha string, st CommitStatus) error
	checksClient
}

// projectGetter reads the project a build belongs to.
type projectGetter interface {
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
}

// StatusPoster sets a commit status on the commit a GitHub project's build builds: pending when
// the build is created with its commit, or when a build of a branch learns its commit at
// checkout; success when it completes; failure when it fails; error when it is cancelled or
// superseded (it did not judge the commit). Context is "kiln/<platform>-<buildType>", the link
// is the build's page in the console. Only installations that granted "Commit statuses: read and
// write" get statuses.
//
// An installation that granted "Checks: read and write" gets a check run per build instead (see
// checkrun.go), and no commit status: both would show twice on a pull request, and a required
// status check of branch protection is matched by name, which the check run keeps.
//
// Posting never holds up nor fails a build: statuses are posted in order by a worker of their
// own (Sync posts them in the caller, for a process that may be frozen once it answers, such as a
// Lambda), each within Timeout, and a failure is logged.
type StatusPoster struct {
	GitHub    statusClient
	Projects  projectGetter
	PublicURL string // the console is under PublicURL/console/
	Logger    *slog.Logger
	// Timeout bounds each post (10 seconds when zero).
	Timeout time.Duration
	Sync    bool
	// Logs is where a completed build's log is read for its check run's annotations (nil: no
	// annotations). Settings reads the build's setting for its .uproject (nil: the project's).
	Logs     LogReader
	Settings settingGetter
	// AnnotateTimeout bounds reading the log at completion (60 seconds when zero); past it the
	// check run gets the annotations found so far.
	AnnotateTimeout time.Duration

	checkRuns checkRunIDs

	mu      sync.Mutex
	queue   []statusJob
	running bool
	idle    sync.WaitGroup
}

// maxQueuedStatuses bounds the statuses waiting to be posted; more are dropped and logged.
const maxQueuedStatuses = 1000

type statusJob struct {
	build  kiln.Build
	status CommitStatus
	// checkOnly is a change a commit status does not show (pending to running): only a check
	// run is moved.
	checkOnly bool
	// created is a build just created: its check run is new.
	created bool
}

// BuildChanged posts the status of a build's new status, when its commit is known: when it is
// created, starts running (check runs only) and ends.
func (p *StatusPoster) BuildChanged(ctx context.Context, from kiln.BuildStatus, b *kiln.Build) {
	switch {
	case from == "":
		p.post(ctx, b, statusJob{created: true})
	case b.Status.Terminal():
		p.post(ctx, b, statusJob{})
	case b.Status == kiln.StatusRunning && from != kiln.StatusRunning:
		p.post(ctx, b, statusJob{checkOnly: true})
	}
}

// CommitLearned posts pending on the commit a running build just checked out.
func (p *StatusPoster) CommitLearned(ctx context.Context, b *kiln.Build) {
	p.post(ctx, b, statusJob{})
}

// Wait returns once every queued status was posted (or given up on).
func (p *StatusPoster) Wait() { p.idle.Wait() }

// StatusOf is the commit status of a build as it is.
func (p *StatusPoster) StatusOf(b *kiln.Build) CommitStatus {
	st := CommitStatus{Context: checkName(b), TargetURL: p.buildLink(b)}
	build := buildWords(b)
	switch {
	case b.Status == kiln.StatusComplete:
		st.State, st.Description = StateSuccess, build+" completed"
	case b.Status == kiln.StatusSuperseded:
		st.State, st.Description = StateError, build+" was superseded by a newer one"
	case b.Status == kiln.StatusFailed && b.FailureReason == "cancelled":
		st.State, st.Description = StateError, build+" was cancelled"
	case b.Status == kiln.StatusFailed:
		st.State, st.Description = StateFailure, build+" failed: "+b.FailureReason
	case b.Status == kiln.StatusRunning:
		st.State, st.Description = StatePending, build+" is running"
	default:
		st.State, st.Description = StatePending, build+" is queued"
	}
	return st
}

func (p *StatusPoster) post(ctx context.Context, b *kiln.Build, job statusJob) {
	if b.Commit == "" {
		return // nothing to set a status on yet (a branch before checkout)
	}
	job.build, job.status = *b, p.StatusOf(b)
	if p.Sync {
		p.send(ctx, job)
		return
	}
	p.mu.Lock()
	if len(p.queue) >= maxQueuedStatuses {
		p.mu.Unlock()
		p.log().WarnContext(ctx, "commit status dropped: too many waiting", slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID))
		return
	}
	p.queue = append(p.queue, job)
	start := !p.running
	p.running = true
	if start {
		p.idle.Add(1)
	}
	p.mu.Unlock()
	if start {
		go p.drain(context.WithoutCancel(ctx))
	}
}

// drain posts the queued statuses in order until none is left.
func (p *StatusPoster) drain(ctx context.Context) {
	defer p.idle.Done()
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		job := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		p.send(ctx, job)
	}
}

// send posts one status if the build's project is on GitHub and its installation allows it.
func (p *StatusPoster) send(ctx context.Context, job statusJob) {
	b := &job.build
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	logErr := func(msg string, err error) {
		p.log().WarnContext(ctx, msg, slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID),
			slog.String("state", job.status.State), slog.String("error", err.Error()))
	}
	proj, err := p.Projects.GetProject(ctx, b.OrganizationID, b.ProjectID)
	if err != nil {
		if !kiln.IsCode(err, kiln.ENotFound) {
			logErr("commit status: read the project", err)
		}
		return
	}
	if proj.SourceControl != kiln.SourceGitHub {
		return
	}
	inst, err := strconv.ParseInt(proj.InstallationID, 10, 64)
	if err != nil {
		return
	}
	checks, err := p.GitHub.CanWriteChecks(ctx, inst)
	if err != nil {
		logErr("check run: read the installation's permissions", err)
		return
	}
	if checks {
		cancel() // the check run's requests have their own deadlines
		p.sendCheckRun(context.WithoutCancel(ctx), inst, proj, job)
		return
	}
	if job.checkOnly {
		return
	}
	allowed, err := p.GitHub.CanWriteStatuses(ctx, inst)
	if err != nil {
		logErr("commit status: read the installation's permissions", err)
		return
	}
	if !allowed {
		return
	}
	if err := p.GitHub.CreateStatus(ctx, inst, proj.RepoLink, b.Commit, job.status); err != nil {
		logErr("commit status not posted", err)
	}
}

func (p *StatusPoster) log() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

// checkName is the name GitHub shows for a build's status or check run: "kiln/<platform>-<type>".
func checkName(b *kiln.Build) string {
	return "kiln/" + string(b.Platform) + "-" + string(b.BuildType)
}

// buildLink is the build's page in the console ("" without a public URL).
func (p *StatusPoster) buildLink(b *kiln.Build) string {
	if p.PublicURL == "" {
		return ""
	}
	return p.PublicURL + "/console/builds/" + b.ID
}

// buildWords names the build in a status or check run: "Build #12", or "The build" without a
// number.
func buildWords(b *kiln.Build) string {
	if b.Number > 0 {
		return "Build " + b.Label()
	}
	return "The build"
}
