package accounts

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func cmpOr(p, def kiln.Plan) kiln.Plan {
	if p == "" {
		return def
	}
	return p
}

// SetPlan changes an organization's plan (the operator's `kiln admin plan`). maxConcurrent, when
// not nil, sets an enterprise organization's own limit of builds running at once (0: the
// plan's); other plans take no such value. Moving to another plan clears it. What the
// organization has keeps working; what the new plan does not allow can no longer be added.
func SetPlan(ctx context.Context, s Store, orgID string, plan kiln.Plan, maxConcurrent *int, now time.Time) (*kiln.Organization, error) {
	errs := kiln.FieldErrors{}
	if !plan.Valid() {
		errs.Add("plan", "must be one of free, pro, enterprise")
	}
	if maxConcurrent != nil && *maxConcurrent < 0 {
		errs.Add("maxConcurrentBuilds", "must be 0 (the plan's) or more")
	}
	if maxConcurrent != nil && plan != kiln.PlanEnterprise {
		errs.Add("maxConcurrentBuilds", "is set per organization only on the enterprise plan")
	}
	if len(errs) > 0 { // operators read the message: it names every field at fault
		var parts []string
		for _, f := range slices.Sorted(maps.Keys(errs)) {
			parts = append(parts, f+" "+errs[f])
		}
		return nil, &kiln.Error{Code: kiln.EValidation, Message: strings.Join(parts, "; "), Fields: errs}
	}
	org, err := s.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("organization %s: %w", orgID, err)
	}
	from := org.Plan
	if plan != kiln.PlanEnterprise {
		org.MaxConcurrentBuilds = 0
	} else if maxConcurrent != nil {
		org.MaxConcurrentBuilds = *maxConcurrent
	}
	org.Plan, org.UpdatedAt = plan, now.UTC().Truncate(time.Millisecond)
	if err := s.UpdateOrganization(ctx, org); err != nil {
		return nil, fmt.Errorf("set plan: %w", err)
	}
	details := map[string]string{"from": string(from), "plan": string(plan)}
	if org.MaxConcurrentBuilds > 0 {
		details["maxConcurrentBuilds"] = strconv.Itoa(org.MaxConcurrentBuilds)
	}
	if err := recordOperatorChange(ctx, s, org.ID, "plan.changed", org.ID, now, details); err != nil {
		return nil, err
	}
	return org, nil
}
