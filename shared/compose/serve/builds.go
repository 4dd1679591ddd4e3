package serve

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/agentpool"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/compose/core"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/live"
	"github.com/kilnbuild/kiln/shared/livesocket"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/plans"
	"github.com/kilnbuild/kiln/shared/runner"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/webhooks"
	"github.com/kilnbuild/kiln/shared/workflow/local"
)

// buildMachine is everything that runs builds on this machine.
type buildMachine struct {
	core      *core.Core
	service   *builds.Service
	deliverer *builds.AutoDeployer
	hooks     *webhooks.Sender
	workflow  *local.Workflow
	runner    *runner.Runner
	scheduler *builds.Scheduler
	janitor   *builds.Janitor
	artifacts artifacts.Store
	logs      *buildlog.Files
	// sockets are the live events' sockets, at /socket.io/.
	sockets  *livesocket.Server
	statuses *github.StatusPoster // nil without a GitHub App
	agents   *agentpool.Dispatcher
	plans    *plans.Plans
	// reserve is the free space the data volume keeps (KILN_DISK_RESERVE), in bytes.
	reserve int64
	cancel  context.CancelFunc
	loops   sync.WaitGroup
}

// githubSource adapts the GitHub App client to what the runner asks.
type githubSource struct{ *github.Client }

func (g githubSource) CloneURL(ctx context.Context, installationID int64, fullName string) (string, error) {
	r, err := g.Repo(ctx, installationID, fullName)
	if err != nil {
		return "", g.Diagnose(ctx, installationID, fullName, err)
	}
	return r.CloneURL, nil
}

// newBuildMachine sets up logs, artifacts, the agent, the in-process workflow, the scheduler and
// the retention janitor, all with their state under the data directory.
func newBuildMachine(ctx context.Context, cfg Config, st store.Store, keys *keyring.Keyring, gh *github.Client, logger *slog.Logger) (*buildMachine, error) {
	orgs, ok := st.(organizationCounter)
	if !ok {
		return nil, fmt.Errorf("the store %T cannot count organizations", st)
	}
	confiner, err := newSandbox(ctx, cfg, orgs, logger)
	if err != nil {
		return nil, err
	}
	limits := newBuildLimits(ctx, cfg, logger)
	reserve, err := diskReserveOf(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	logs, err := buildlog.NewFiles(filepath.Join(cfg.Data, "logs"))
	if err != nil {
		return nil, err
	}
	logs.SetRetention(cfg.ArtifactRetention, nil) // a log is kept as long as the artifact
	arts, err := newArtifactStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c, err := core.New(core.Parts{Store: st, Logs: logs, Artifacts: arts, Keys: keys, GitHub: gh, Logger: logger,
		Engines: engines.Dir{Path: cfg.Engines}, LiveRegistry: live.NewMemory(), LiveInBackground: true}, coreSettings(cfg))
	if err != nil {
		return nil, err
	}
	sockets := livesocket.New(c.Live, logger)
	lifecycle := c.Lifecycle
	sources := runner.LocalSources{Store: st, P4: &perforce.Connector{Verifier: cfg.PerforceVerifier(), Open: keys.Sealer().Open,
		Store: st, Seal: keys.Sealer().Seal, Logger: logger}}
	if gh != nil {
		sources.GitHub = githubSource{gh}
	}
	host := &runner.Runner{
		Store: st, Lifecycle: runner.LocalLifecycle{Lifecycle: lifecycle, Logs: c.LiveLogs(logs)}, Sources: sources,
		Logs: c.RunnerLogs(logs), Artifacts: arts, Engines: engines.Dir{Path: cfg.Engines},
		Steps:   &buildsteps.Steps{Artifacts: arts, Logger: logger, Sandbox: confiner, Limits: limits},
		WorkDir: cfg.Data, Logger: logger, TimeLimit: cfg.BuildTimeout,
		MaxLogLines: cfg.LogMaxLines, ArtifactMax: cfg.ArtifactMax, DiskReserve: reserve,
	}
	if c.Caches != nil {
		host.Caches = runner.StoredCaches{Cache: c.Caches, MaxPerOrg: c.CacheMaxPerOrg, Logger: logger}
	}
	wf := local.New(st, lifecycle, host, cfg.Workers, logger)
	orgMax := cfg.OrgMaxRunning
	if orgMax == 0 {
		orgMax = cfg.Workers
	}
	wf.OrgLimit = planLimit(c.Plans, orgMax, logger)
	wf.AgentWait = cfg.AgentWait
	dispatcher := &agentpool.Dispatcher{Store: st, Lifecycle: lifecycle, Logger: logger}
	svc := c.Builds
	svc.Workflow = AgentWaking{wf, dispatcher} // the workflow needs the lifecycle: set once both exist
	janitor := &builds.Janitor{Store: st, Artifacts: arts, Logs: logs, Retention: cfg.ArtifactRetention, Logger: logger}
	if c.Caches != nil { // never a nil *Cache in the interface
		janitor.Caches, janitor.Projects = c.Caches, st
	}
	return &buildMachine{
		core: c, service: svc, agents: dispatcher, reserve: reserve, plans: c.Plans, deliverer: c.AutoDeployer, hooks: c.Webhooks, workflow: wf, runner: host, artifacts: arts, logs: logs, statuses: c.Statuses,
		scheduler: &builds.Scheduler{Store: st, Service: svc, Logger: logger, Every: cfg.SchedulerEvery, Now: cfg.SchedulerClock},
		janitor:   janitor,
		sockets:   sockets,
	}, nil
}

// start stops what a crashed run left running, recovers interrupted builds and starts the workers, the scheduler and the janitor.
func (m *buildMachine) start(ctx context.Context) error {
	m.runner.KillOrphans(ctx)
	if err := m.workflow.Run(ctx); err != nil {
		return err
	}
	ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	m.loops.Go(func() { m.scheduler.Run(ctx) })
	m.loops.Go(func() { m.janitor.Run(ctx) })
	m.loops.Go(func() { m.deliverer.Run(ctx) })
	m.loops.Go(func() { m.hooks.Run(ctx) })
	return nil
}

// stop stops taking builds and fails the running ones as interrupted.
func (m *buildMachine) stop(ctx context.Context) error {
	if m.cancel != nil {
		m.cancel()
	}
	err := m.workflow.Shutdown(ctx)
	m.loops.Wait()
	if m.statuses != nil {
		m.statuses.Wait() // each post is bounded by its timeout
	}
	return err
}

// PerforceVerifier checks and reads Perforce servers with the configured p4 client, keeping each
// organization's p4 state (tickets, trust) in a private directory under the data directory.
func (cfg Config) PerforceVerifier() *perforce.Verifier {
	return &perforce.Verifier{P4: cfg.P4, Dir: filepath.Join(cfg.Data, "p4"), Allow: cfg.OutboundAllow, Timeout: 30 * time.Second}
}

// coreSettings are the settings of kiln serve the build core reads.
func coreSettings(cfg Config) core.Settings {
	return core.Settings{
		Plans: cfg.Plans, PublicURL: cfg.PublicURL, SMTPURL: cfg.SMTPURL, SMTPFrom: cfg.SMTPFrom,
		OutboundAllow: cfg.OutboundAllow, DeliveryAttempts: cfg.DeliveryAttempts, DeliveryBackoff: cfg.DeliveryBackoff,
		RateLimit: cfg.RateLimit, CacheMaxPerOrg: cfg.CacheMaxPerOrg,
	}
}

// planLimit is the workflow's limit of an organization's running builds: the smaller of the
// service's (KILN_ORG_MAX_RUNNING) and its plan's. A plan that cannot be read leaves the
// service's limit (and is logged).
func planLimit(p *plans.Plans, serviceMax int, logger *slog.Logger) local.OrgLimit {
	return func(orgID string) int {
		n, err := p.ConcurrentBuilds(context.Background(), orgID)
		if err != nil {
			logger.Error("read an organization's plan", slog.String("org_id", orgID), slog.String("error", err.Error()))
			return serviceMax
		}
		if n == 0 {
			return serviceMax
		}
		return min(n, serviceMax)
	}
}
