package plans

import (
	"context"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Report is an organization's usage of one month beside what its plan allows (0: unlimited).
type Report struct {
	Month string
	Plan  kiln.Plan
	// Minutes are the build minutes of the builds that ended in the month, by platform.
	Minutes                   map[kiln.Platform]int64
	MinutesUsed               int64
	MinutesAllowed            int64
	RunningNow                int
	ConcurrentAllowed         int
	Projects, ProjectsAllowed int
	ArtifactBytes             int64
	// Skipped counts the push and scheduled triggers skipped in the month, by trigger.
	Skipped map[kiln.Trigger]int64
}

// ArtifactSizes adds up an organization's artifacts.
type ArtifactSizes interface {
	ArtifactBytes(ctx context.Context, orgID string) (int64, error)
}

// Report reads the organization's usage of month (YYYY-MM, UTC). Running builds and projects
// are counted now, whatever the month.
func (p *Plans) Report(ctx context.Context, sizes ArtifactSizes, org *kiln.Organization, month string) (*Report, error) {
	u, err := p.Store.GetUsage(ctx, org.ID, month)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	l := p.Limits(org)
	r := &Report{Month: month, Plan: org.Plan, Minutes: u.Minutes, MinutesUsed: u.TotalMinutes(), MinutesAllowed: l.BuildMinutesPerMonth,
		ConcurrentAllowed: l.ConcurrentBuilds, ProjectsAllowed: l.Projects, Skipped: u.Skipped}
	if r.RunningNow, err = p.Running(ctx, org.ID, 0); err != nil {
		return nil, fmt.Errorf("usage: count running builds: %w", err)
	}
	if r.Projects, err = p.projects(ctx, org.ID, 0); err != nil {
		return nil, fmt.Errorf("usage: count projects: %w", err)
	}
	if r.ArtifactBytes, err = sizes.ArtifactBytes(ctx, org.ID); err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	return r, nil
}
