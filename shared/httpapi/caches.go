package httpapi

import (
	"context"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/buildcache"
)

// BuildCaches are the organizations' build caches, as the API reports and removes them
// (*buildcache.Cache implements it).
type BuildCaches interface {
	// Usage is what the caches of an organization hold now.
	Usage(ctx context.Context, org string) (buildcache.Usage, error)
	// DeleteProject removes every cache of a project and returns how many it removed.
	DeleteProject(ctx context.Context, org, project string) (int, error)
}

// cacheUsage is what the organization's build caches hold now, nil when this server keeps no
// caches or they could not be listed (logged: the rest of the report still answers).
func (s *Server) cacheUsage(ctx context.Context, org string) *api.UsageCaches {
	if s.caches == nil {
		return nil
	}
	u, err := s.caches.Usage(ctx, org)
	if err != nil {
		s.logger.WarnContext(ctx, "build cache usage", slog.String("organization_id", org), slog.String("error", err.Error()))
		return nil
	}
	return &api.UsageCaches{Bytes: u.Bytes, Count: u.Count, MaxBytes: limit(s.cacheMax)}
}

// deleteProjectCaches removes the caches of a deleted project. A failure is logged and never
// undoes or fails the delete; the retention janitor removes the caches left behind.
func (s *Server) deleteProjectCaches(ctx context.Context, org, project string) {
	if s.caches == nil {
		return
	}
	n, err := s.caches.DeleteProject(context.WithoutCancel(ctx), org, project)
	if err != nil {
		s.logger.WarnContext(ctx, "delete the build caches of a deleted project", slog.String("organization_id", org),
			slog.String("project_id", project), slog.Int("removed", n), slog.String("error", err.Error()))
		return
	}
	if n > 0 {
		s.logger.InfoContext(ctx, "build caches of a deleted project removed", slog.String("organization_id", org),
			slog.String("project_id", project), slog.Int("removed", n))
	}
}
