// Package plans enforces what an organization's plan allows (free, pro, enterprise; limits from
// kiln.PlanTable): build minutes per month, builds running at once, projects, Perforce and auto
// deploy. It reads the organization fresh from the store for every check, so a plan change
// applies at once, also to builds already queued. The store meters build minutes itself, at each
// build's end (see store.Usage).
package plans

import (
	"context"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// Store is what the plan checks read.
type Store interface {
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
	GetUsage(ctx context.Context, orgID, month string) (*kiln.Usage, error)
	ListProjects(ctx context.Context, orgID string, f store.ProjectFilter, p store.Page) ([]*kiln.Project, string, error)
	ListBuilds(ctx context.Context, orgID string, f store.BuildFilter, p store.Page) ([]*kiln.Build, string, error)
}

// Plans checks organizations against their plans.
type Plans struct {
	Store Store
	// Table holds the plans' limits; nil means kiln.DefaultPlans().
	Table kiln.PlanTable
	Now   func() time.Time
}

func (p *Plans) table() kiln.PlanTable {
	if p.Table == nil {
		return kiln.DefaultPlans()
	}
	return p.Table
}

// Limits are the limits of the organization's plan.
func (p *Plans) Limits(org *kiln.Organization) kiln.PlanLimits { return p.table().Limits(org) }

func (p *Plans) organization(ctx context.Context, orgID string) (*kiln.Organization, error) {
	org, err := p.Store.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("plan check: %w", err)
	}
	return org, nil
}

// CheckMinutes is nil while the organization has build minutes left this month (UTC), and
// plan_limit_reached once it has used its allowance. Running builds are not its concern: they
// finish, and their minutes count when they end.
func (p *Plans) CheckMinutes(ctx context.Context, orgID string) error {
	org, err := p.organization(ctx, orgID)
	if err != nil {
		return err
	}
	allowed := p.Limits(org).BuildMinutesPerMonth
	if allowed == 0 {
		return nil
	}
	month := kiln.UsageMonth(kiln.Now(p.Now))
	u, err := p.Store.GetUsage(ctx, orgID, month)
	if err != nil {
		return fmt.Errorf("plan check: %w", err)
	}
	if used := u.TotalMinutes(); used >= allowed {
		return kiln.PlanLimitError(org.Plan, "%d build minutes per month, and those of %s are used (%d)", allowed, month, used)
	}
	return nil
}

// CheckNewProject is nil when the organization may add a project, plan_limit_reached when it
// has as many as its plan allows. It is an early check only: projects created at the same moment
// may all pass it, so CreateProject decides.
func (p *Plans) CheckNewProject(ctx context.Context, org *kiln.Organization) error {
	allowed := p.Limits(org).Projects
	if allowed == 0 {
		return nil
	}
	n, err := p.projects(ctx, org.ID, allowed)
	if err != nil {
		return fmt.Errorf("plan check: count projects: %w", err)
	}
	if n >= allowed {
		return projectLimitError(org, allowed)
	}
	return nil
}

func projectLimitError(org *kiln.Organization, allowed int) error {
	return kiln.PlanLimitError(org.Plan, "%d project(s)", allowed)
}

// CheckPerforce is nil when the organization's plan allows Perforce.
func (p *Plans) CheckPerforce(org *kiln.Organization) error {
	if !p.Limits(org).Perforce {
		return kiln.PlanLimitError(org.Plan, "no Perforce")
	}
	return nil
}

// CheckAutoDeploy is nil when the organization's plan allows auto deploy.
func (p *Plans) CheckAutoDeploy(org *kiln.Organization) error {
	if !p.Limits(org).AutoDeploy {
		return kiln.PlanLimitError(org.Plan, "no auto deploy")
	}
	return nil
}

// ConcurrentBuilds is how many of the organization's builds may run at once on the service's
// hosts (0: no limit of the plan; the service's capacity).
func (p *Plans) ConcurrentBuilds(ctx context.Context, orgID string) (int, error) {
	org, err := p.organization(ctx, orgID)
	if err != nil {
		return 0, err
	}
	return p.Limits(org).ConcurrentBuilds, nil
}

// Running counts the organization's running builds, stopping at upTo (0: all).
func (p *Plans) Running(ctx context.Context, orgID string, upTo int) (int, error) {
	return countUpTo(upTo, func(pg store.Page) (int, string, error) {
		items, next, err := p.Store.ListBuilds(ctx, orgID, store.BuildFilter{Status: kiln.StatusRunning}, pg)
		return len(items), next, err
	})
}

// projects counts the organization's projects, stopping at upTo (0: all).
func (p *Plans) projects(ctx context.Context, orgID string, upTo int) (int, error) {
	return countUpTo(upTo, func(pg store.Page) (int, string, error) {
		items, next, err := p.Store.ListProjects(ctx, orgID, store.ProjectFilter{}, pg)
		return len(items), next, err
	})
}

// countUpTo pages through a list counting its items, stopping once upTo are counted (0: all).
func countUpTo(upTo int, page func(store.Page) (int, string, error)) (int, error) {
	n, pg := 0, store.Page{Limit: store.MaxLimit}
	if upTo > 0 && upTo < store.MaxLimit {
		pg.Limit = upTo
	}
	for {
		got, next, err := page(pg)
		if err != nil {
			return 0, err
		}
		n += got
		if next == "" || (upTo > 0 && n >= upTo) {
			return n, nil
		}
		pg.After = next
	}
}
