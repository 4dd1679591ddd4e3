// Package adminresult is what the admin commands print, the same on one machine (`kiln admin`)
// and in AWS (the admin Lambda, `kiln admin --dynamodb-table`).
package adminresult

import "github.com/kilnbuild/kiln/shared/kiln"

// Result is what `kiln admin` prints: bootstrap and token {"token","organizationId","userId"},
// user {"token","userId"}, plan {"organizationId","plan","maxConcurrentBuilds"}. The token is
// shown only here.
type Result struct {
	Token               string `json:"token,omitempty"`
	OrganizationID      string `json:"organizationId,omitempty"`
	UserID              string `json:"userId,omitempty"`
	Plan                string `json:"plan,omitempty"`
	MaxConcurrentBuilds *int   `json:"maxConcurrentBuilds,omitempty"`
}

// Plan is what the plan command prints: the organization's plan and, for enterprise, its own
// limit of running builds (0: the plan's).
func Plan(org *kiln.Organization) Result {
	r := Result{OrganizationID: org.ID, Plan: string(org.Plan)}
	if org.Plan == kiln.PlanEnterprise {
		n := org.MaxConcurrentBuilds
		r.MaxConcurrentBuilds = &n
	}
	return r
}
