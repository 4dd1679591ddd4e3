package plans

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// ProjectCreator stores a project while its organization has fewer than max projects (max 0:
// no limit), counting and writing in one atomic step (store.Projects.CreateProject).
type ProjectCreator interface {
	CreateProject(ctx context.Context, p *kiln.Project, max int) error
}

// CreateProject stores pr, a project of org, unless org already has as many projects as its plan
// allows: then it answers plan_limit_reached and stores nothing. The store counts and writes in
// one step, so projects created at the same moment never exceed the plan.
func (p *Plans) CreateProject(ctx context.Context, st ProjectCreator, org *kiln.Organization, pr *kiln.Project) error {
	allowed := p.Limits(org).Projects
	err := st.CreateProject(ctx, pr, allowed)
	if allowed > 0 && kiln.IsCode(err, kiln.EPlanLimitReached) {
		return projectLimitError(org, allowed)
	}
	return err
}
