package buildsettings

import (
	"context"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Caches removes the build caches of a key (buildcache.Cache).
type Caches interface {
	DeleteKey(ctx context.Context, key buildcache.Key) (int, error)
}

// SettingLister lists a project's build settings.
type SettingLister interface {
	ListBuildSettings(ctx context.Context, orgID, projectID string) ([]*kiln.BuildSetting, error)
}

// cacheKey is the build cache key the builds of a setting use (a trigger's branch override
// aside): its branch or stream, platform and engine version.
func cacheKey(st *kiln.BuildSetting) buildcache.Key {
	return buildcache.Key{Org: st.OrganizationID, Project: st.ProjectID, Ref: st.Ref(), Platform: string(st.Platform), Engine: st.UEVersion}
}

// dropUnusedCache removes the build caches of gone's key when no setting of its project builds
// that key any more (it was deleted, or changed branch, platform or engine version). Caches of
// a key a trigger's branch override made are left to the per-organization cap, and so are those
// of a setting without ueVersion (each build resolves its engine, see builds.ResolveEngine), and
// those a setting without ueVersion of the same branch and platform may still build. A failure
// is logged: the setting's change stands.
func (s *Service) dropUnusedCache(ctx context.Context, gone *kiln.BuildSetting) {
	if s.Caches == nil || s.Settings == nil || gone.UEVersion == "" {
		return
	}
	key := cacheKey(gone)
	settings, err := s.Settings.ListBuildSettings(ctx, gone.OrganizationID, gone.ProjectID)
	if err == nil {
		for _, other := range settings {
			k := cacheKey(other)
			if k == key || other.UEVersion == "" && k.Ref == key.Ref && k.Platform == key.Platform {
				return // still built, or may be
			}
		}
		var n int
		if n, err = s.Caches.DeleteKey(ctx, key); err == nil && n > 0 {
			s.logger().InfoContext(ctx, "build caches of a key no setting builds removed", slog.String("org_id", gone.OrganizationID),
				slog.String("project_id", gone.ProjectID), slog.Int("removed", n))
		}
	}
	if err != nil {
		s.logger().WarnContext(ctx, "remove the build caches of a key no setting builds", slog.String("org_id", gone.OrganizationID),
			slog.String("project_id", gone.ProjectID), slog.String("error", err.Error()))
	}
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
