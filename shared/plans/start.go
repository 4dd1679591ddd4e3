package plans

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// CheckStart is the plan's check of a build about to start (claimed from the queue, by a build
// host of the service or by one of the organization's agents): nil while the organization has
// build minutes left this month, plan_limit_reached once they are used up. The trigger checked
// the same before the build was queued; a build that waited while the organization's other
// builds used up the allowance is refused here, so builds queued together cannot overrun it.
// (The limit of builds running at once is the queue's choice, see MayRun, not this check.)
func (p *Plans) CheckStart(ctx context.Context, b *kiln.Build) error {
	return p.CheckMinutes(ctx, b.OrganizationID)
}
