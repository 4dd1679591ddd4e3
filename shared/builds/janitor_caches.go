package builds

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// ProjectCaches are the build caches as the janitor sweeps them (*buildcache.Cache implements it).
type ProjectCaches interface {
	// Projects lists the projects that have build caches.
	Projects(ctx context.Context) ([]buildcache.ProjectRef, error)
	// DeleteProject removes every cache of a project and returns how many it removed.
	DeleteProject(ctx context.Context, org, project string) (int, error)
}

// ProjectGetter finds a project (store.Store implements it).
type ProjectGetter interface {
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
}

// sweepCaches removes the build caches of projects that no longer exist: those whose removal
// failed when the project was deleted. It does nothing without Caches.
func (j *Janitor) sweepCaches(ctx context.Context) error {
	if j.Caches == nil || j.Projects == nil {
		return nil
	}
	refs, err := j.Caches.Projects(ctx)
	if err != nil {
		return fmt.Errorf("build cache retention: %w", err)
	}
	for _, ref := range refs {
		_, err := j.Projects.GetProject(ctx, ref.Org, ref.Project)
		if err == nil {
			continue
		}
		if !kiln.IsCode(err, kiln.ENotFound) {
			return fmt.Errorf("build cache retention: project %s: %w", ref.Project, err)
		}
		n, err := j.Caches.DeleteProject(ctx, ref.Org, ref.Project)
		if err != nil {
			return fmt.Errorf("build cache retention: %w", err)
		}
		if j.Logger != nil {
			j.Logger.InfoContext(ctx, "build caches of a deleted project removed", slog.String("organization_id", ref.Org),
				slog.String("project_id", ref.Project), slog.Int("removed", n))
		}
	}
	return nil
}
