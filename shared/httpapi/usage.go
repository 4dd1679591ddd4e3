package httpapi

import (
	"context"
	"net/http"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/plans"
)

// planCheck runs a plan check on the organization as stored now (the principal's copy may come
// from the token cache, and a plan may just have changed). Without plans it allows everything.
func (s *Server) planCheck(ctx context.Context, orgID string, check func(p *plans.Plans, org *kiln.Organization) error) error {
	if s.plans == nil {
		return nil
	}
	org, err := s.orgs.GetOrganization(ctx, orgID)
	if err != nil {
		return err
	}
	return check(s.plans, org)
}

// checkAutoDeployPlan is nil when the organization's plan includes auto deploy (a delivery
// address, its header, a redeploy), plan_limit_reached when it does not.
func (s *Server) checkAutoDeployPlan(ctx context.Context, orgID string) error {
	return s.planCheck(ctx, orgID, func(p *plans.Plans, org *kiln.Organization) error { return p.CheckAutoDeploy(org) })
}

// limit renders a plan limit: null for unlimited (0).
func limit[T int | int64](n T) *int64 {
	if n == 0 {
		return nil
	}
	v := int64(n)
	return &v
}

// getUsage answers GET /organizations/:id/usage?month=YYYY-MM (default: this month, UTC).
func (s *Server) getUsage(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if _, err := ownOrganization(r, p); err != nil {
		return err
	}
	month := kiln.UsageMonth(s.now())
	if q := r.URL.Query(); q.Has("month") {
		m, ok := kiln.ParseUsageMonth(q.Get("month"))
		if !ok {
			return kiln.FieldError(kiln.EValidation, "month must be a calendar month YYYY-MM, such as 2026-11", "month", "must be YYYY-MM")
		}
		month = m
	}
	if s.plans == nil {
		return kiln.Errorf(kiln.EServiceUnavailable, "usage is not available on this server")
	}
	org, err := s.orgs.GetOrganization(r.Context(), p.Organization.ID)
	if err != nil {
		return err
	}
	rep, err := s.plans.Report(r.Context(), s.artifactSizes, org, month)
	if err != nil {
		return err
	}
	out := api.Usage{
		OrganizationID: org.ID, Plan: string(rep.Plan), Month: rep.Month,
		BuildMinutes:         api.UsageMinutes{Used: rep.MinutesUsed, Allowed: limit(rep.MinutesAllowed), ByPlatform: map[string]int64{}},
		ConcurrentBuilds:     api.UsageCount{Current: rep.RunningNow, Allowed: limit(rep.ConcurrentAllowed)},
		Projects:             api.UsageCount{Current: rep.Projects, Allowed: limit(rep.ProjectsAllowed)},
		ArtifactStorageBytes: rep.ArtifactBytes,
		SkippedTriggers:      map[string]int64{"total": 0, string(kiln.TriggerPush): 0, string(kiln.TriggerScheduled): 0},
		BuildCaches:          s.cacheUsage(r.Context(), org.ID),
	}
	allows := s.plans.Limits(org)
	out.Allows = api.UsageAllows{Perforce: allows.Perforce, AutoDeploy: allows.AutoDeploy}
	for pl, n := range rep.Minutes {
		out.BuildMinutes.ByPlatform[string(pl)] = n
	}
	for t, n := range rep.Skipped {
		out.SkippedTriggers[string(t)] += n
		out.SkippedTriggers["total"] += n
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
