// Package builds starts, supersedes, cancels and runs builds. Service is what the API, the push
// webhook and the scheduler call; Runner does the work of one claimed build through the agent.
package builds

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// Workflow runs builds: Start asks for a pending build to be run (it is already in the store);
// Stop asks the host running a build to stop it (its status has already been set).
type Workflow interface {
	Start(ctx context.Context, b *kiln.Build) error
	Stop(ctx context.Context, b *kiln.Build) error
}

// Service starts and stops builds: what the API, the push webhooks and the scheduler call. Its
// status changes go through Lifecycle.
type Service struct {
	Store     ServiceStore
	Lifecycle *Lifecycle
	Workflow  Workflow
	Logger    *slog.Logger
	Now       func() time.Time
	// Allowance checks the organization's build minutes before a build starts (nil: no plans).
	Allowance Allowance
	// Skips counts, and SkipEvents hears of, push and scheduled triggers skipped for the plan.
	Skips      SkipStore
	SkipEvents SkipEvents
	// Engines lists the engine versions the build hosts provide: a build of a setting without
	// ueVersion may take the newest, and one whose .uproject names a version none provides
	// fails at once (nil: unknown, neither).
	Engines EngineLister
	// Commits resolves an abbreviated commit override of a GitHub project to its full sha (nil:
	// abbreviations are kept as given).
	Commits CommitResolver
}

// CommitResolver turns an abbreviated commit sha of a GitHub project into the full sha; a
// prefix naming no commit, or several, is validation_failed on commit (github.Client).
type CommitResolver interface {
	ProjectCommit(ctx context.Context, p *kiln.Project, prefix string) (string, error)
}

// ServiceStore is what the service reads and writes itself.
type ServiceStore interface {
	CreateBuild(ctx context.Context, b *kiln.Build) error
	CreateBuildOnce(ctx context.Context, b *kiln.Build, key, fingerprint string) (*kiln.Build, string, bool, error)
	ListBuilds(ctx context.Context, orgID string, f store.BuildFilter, p store.Page) ([]*kiln.Build, string, error)
	// What a re-run reads: the build it re-runs, and that build's project and setting.
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
	GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error)
	// GetOrganization reads the organization's default engine version.
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
}

// TriggerRequest asks for a build of a setting.
type TriggerRequest struct {
	Project    *kiln.Project
	Setting    *kiln.BuildSetting
	Branch     string // override; empty: the setting's
	Commit     string // override (GitHub)
	Changelist string // override (Perforce)
	// Clean asks for a clean build: the host ignores the build cache, and the build replaces it.
	Clean       bool
	TriggeredBy string
	// IdempotencyKey, when set, makes the request safe to repeat: the same key gives the same
	// build, and a different request under the same key is refused. Fingerprint digests the
	// request. A push or scheduled trigger sets both.
	IdempotencyKey, Fingerprint string
	// ClientKey, when its Key is set, is a caller's Idempotency-Key: Trigger then derives
	// IdempotencyKey and Fingerprint from it and the request itself.
	ClientKey ClientKey
	// RerunOf is the id of the build this trigger re-runs (see Rerun), "" otherwise.
	RerunOf string
}

// ref is the branch (a Perforce project's stream) and the commit (its changelist) a build of
// req builds: the request's overrides, or the setting's branch and no commit yet.
func (req TriggerRequest) ref() (branch, commit string) {
	branch, commit = req.Setting.Ref(), req.Commit
	if req.Project.SourceControl == kiln.SourcePerforce && req.Changelist != "" {
		commit = req.Changelist
	}
	if req.Branch != "" {
		branch = req.Branch
	}
	return branch, commit
}

func (s *Service) now() time.Time { return kiln.Now(s.Now) }

// Trigger creates a pending build, supersedes the earlier pending or running builds of the same
// project, branch, platform and build type, and hands the build to the workflow. created is
// false when an idempotency key returned an earlier build. Once the organization's build minutes
// are used up it starts nothing and answers plan_limit_reached: a push or scheduled trigger is
// then recorded as skipped (see allow). An abbreviated commit override is resolved to the full
// sha first (Commits; none or several is validation_failed on commit). The build's engine
// version is resolved (ResolveEngine); one its .uproject names that no build host provides
// fails the build at once, with a reason naming both.
func (s *Service) Trigger(ctx context.Context, req TriggerRequest) (b *kiln.Build, created bool, err error) {
	st, pr := req.Setting, req.Project
	if req.ClientKey.Key != "" {
		req.IdempotencyKey, req.Fingerprint = clientIdempotency(req)
	}
	if len(req.Commit) < 40 && req.Commit != "" && pr.SourceControl == kiln.SourceGitHub && s.Commits != nil {
		full, err := s.Commits.ProjectCommit(ctx, pr, req.Commit)
		if err != nil {
			return nil, false, fmt.Errorf("trigger: %w", err)
		}
		req.Commit = full
	}
	if err := s.allow(ctx, req); err != nil {
		return nil, false, err
	}
	engine, err := s.engine(ctx, st, pr)
	if err != nil {
		return nil, false, fmt.Errorf("trigger: %w", err)
	}
	b = &kiln.Build{
		ID: kiln.NewID(), OrganizationID: pr.OrganizationID, ProjectID: pr.ID, BuildSettingID: st.ID,
		Status: kiln.StatusPending, Platform: st.Platform, BuildType: st.BuildType,
		UEVersion: engine.Version, UEVersionSource: engine.Source, TriggeredBy: req.TriggeredBy, CreatedAt: s.now(),
		Changelist: req.Changelist, AgentPool: st.AgentPool, Clean: req.Clean,
	}
	b.RerunOf = req.RerunOf
	b.Branch, b.Commit = req.ref()
	if st.AutoDeploy && st.UploadBuildURL != "" {
		b.AutoDeployStatus = kiln.AutoDeployPending
	}
	if req.IdempotencyKey != "" {
		got, fingerprint, created, err := s.Store.CreateBuildOnce(ctx, b, req.IdempotencyKey, req.Fingerprint)
		if err != nil {
			return nil, false, fmt.Errorf("trigger: %w", err)
		}
		if !created {
			if fingerprint != req.Fingerprint {
				return nil, false, kiln.Errorf(kiln.EIdempotencyKeyReused, "this Idempotency-Key was used for a different request")
			}
			return got, false, nil
		}
	} else if err := s.Store.CreateBuild(ctx, b); err != nil {
		return nil, false, fmt.Errorf("trigger: %w", err)
	}
	s.Lifecycle.Created(ctx, b)
	if engine.Problem != "" {
		failed, err := s.Lifecycle.Fail(context.WithoutCancel(ctx), b.OrganizationID, b.ID, engine.Problem)
		if err != nil {
			return nil, false, fmt.Errorf("trigger: fail a build without an engine: %w", err)
		}
		return failed, true, nil
	}
	if err := s.supersede(ctx, b); err != nil {
		s.log().ErrorContext(ctx, "supersede earlier builds", slog.String("build_id", b.ID), slog.String("error", err.Error()))
	}
	if err := s.Workflow.Start(ctx, b); err != nil {
		s.log().ErrorContext(ctx, "start build", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		if _, ferr := s.Lifecycle.Fail(context.WithoutCancel(ctx), b.OrganizationID, b.ID, "could not start: "+err.Error()); ferr != nil {
			s.log().ErrorContext(ctx, "fail a build that could not start", slog.String("build_id", b.ID), slog.String("error", ferr.Error()))
		}
		return nil, false, fmt.Errorf("trigger: start: %w", err)
	}
	return b, true, nil
}

// engine resolves the engine version of a build of st (ResolveEngine): the organization is read
// only when neither the setting nor the .uproject names a version, the installed engines only
// when they matter.
func (s *Service) engine(ctx context.Context, st *kiln.BuildSetting, pr *kiln.Project) (EngineChoice, error) {
	if st.UEVersion != "" {
		return ResolveEngine(st, pr, nil, nil), nil
	}
	org, err := s.Store.GetOrganization(ctx, pr.OrganizationID)
	if err != nil {
		return EngineChoice{}, fmt.Errorf("read the organization's default engine: %w", err)
	}
	var installed []string
	if s.Engines != nil {
		if installed, err = s.Engines.Versions(ctx); err != nil {
			return EngineChoice{}, fmt.Errorf("list the installed engines: %w", err)
		}
	}
	return ResolveEngine(st, pr, org, installed), nil
}

// supersede moves the earlier pending or running builds of the same project, branch, platform
// and build type to superseded, stopping the running ones. Only builds made before b are
// touched, so of two triggers at once the later one wins.
func (s *Service) supersede(ctx context.Context, b *kiln.Build) error {
	for _, status := range []kiln.BuildStatus{kiln.StatusPending, kiln.StatusRunning} {
		f := store.BuildFilter{ProjectID: b.ProjectID, Status: status, Platform: b.Platform, BuildType: b.BuildType, Branch: b.Branch}
		page := store.Page{Limit: store.MaxLimit}
		for {
			earlier, next, err := s.Store.ListBuilds(ctx, b.OrganizationID, f, page)
			if err != nil {
				return err
			}
			for _, e := range earlier {
				if e.ID >= b.ID {
					continue
				}
				e, was, err := s.Lifecycle.Supersede(ctx, e.OrganizationID, e.ID)
				if kiln.IsCode(err, kiln.EInvalidState) {
					continue // it moved on meanwhile
				}
				if err != nil {
					return err
				}
				if was == kiln.StatusRunning || e.Host != "" {
					if err := s.Workflow.Stop(ctx, e); err != nil {
						s.log().WarnContext(ctx, "stop superseded build", slog.String("build_id", e.ID), slog.String("error", err.Error()))
					}
				}
			}
			if next == "" {
				break
			}
			page.After = next
		}
	}
	return nil
}

// Cancel fails a pending or running build with reason "cancelled" and stops it; a build that
// already ended is invalid_state.
func (s *Service) Cancel(ctx context.Context, orgID, buildID string) (*kiln.Build, error) {
	b, was, err := s.Lifecycle.Cancel(ctx, orgID, buildID)
	if err != nil {
		return nil, err
	}
	if was == kiln.StatusRunning || b.Host != "" { // running, or pending with a host started for it
		if err := s.Workflow.Stop(ctx, b); err != nil {
			s.log().WarnContext(ctx, "stop cancelled build", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		}
	}
	return b, nil
}

func (s *Service) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
