package app

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/kilnbuild/kiln/shared/agent"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/workflow/local"
)

// buildMachine is everything that runs builds on this machine.
type buildMachine struct {
	service   *builds.Service
	workflow  *local.Workflow
	scheduler *builds.Scheduler
	janitor   *builds.Janitor
	artifacts *fsartifacts.Store
	logs      *buildlog.Files
	cancel    context.CancelFunc
}

// githubSource adapts the GitHub App client to what the runner asks.
type githubSource struct{ *github.Client }

func (g githubSource) CloneURL(ctx context.Context, installationID int64, fullName string) (string, error) {
	r, err := g.Repo(ctx, installationID, fullName)
	if err != nil {
		return "", err
	}
	return r.CloneURL, nil
}

// newBuildMachine sets up logs, artifacts, the agent, the in-process workflow, the scheduler and
// the retention janitor, all with their state under the data directory.
func newBuildMachine(cfg Config, st store.Store, gh *github.Client, logger *slog.Logger) (*buildMachine, error) {
	logs, err := buildlog.NewFiles(filepath.Join(cfg.Data, "logs"))
	if err != nil {
		return nil, err
	}
	arts, err := fsartifacts.New(filepath.Join(cfg.Data, "artifacts"))
	if err != nil {
		return nil, err
	}
	runner := &builds.Runner{
		Store: st, Logs: logs, Artifacts: arts, Engines: engines.Dir{Path: cfg.Engines},
		Agent:   &agent.Agent{Artifacts: arts, Logger: logger},
		WorkDir: cfg.Data, Logger: logger,
	}
	if gh != nil {
		runner.GitHub = githubSource{gh}
	}
	wf := local.New(st, runner, cfg.Workers, logger)
	svc := &builds.Service{Store: st, Workflow: wf, Logger: logger}
	return &buildMachine{
		service: svc, workflow: wf, artifacts: arts, logs: logs,
		scheduler: &builds.Scheduler{Store: st, Service: svc, Logger: logger, Every: cfg.schedulerEvery},
		janitor:   &builds.Janitor{Store: st, Artifacts: arts, Retention: cfg.ArtifactRetention, Logger: logger},
	}, nil
}

// start recovers interrupted builds and starts the workers, the scheduler and the janitor.
func (m *buildMachine) start(ctx context.Context) error {
	if err := m.workflow.Run(ctx); err != nil {
		return err
	}
	ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go m.scheduler.Run(ctx)
	go m.janitor.Run(ctx)
	return nil
}

// stop stops taking builds and fails the running ones as interrupted.
func (m *buildMachine) stop(ctx context.Context) error {
	if m.cancel != nil {
		m.cancel()
	}
	return m.workflow.Shutdown(ctx)
}
