package runner

import (
	"context"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/nofollow"
)

// Caches keeps the build caches of projects (Unreal's compiled objects in Intermediate/ and its
// derived data in DerivedDataCache/) between builds and hosts, under the build's key
// (buildcache.KeyOf). In-process it is StoredCaches; on a remote build host, the host API.
//
// The project directory is always a nofollow.Dir: a build owns its workspace, so nothing in it
// is followed when kiln, with its own privileges, reads, writes or removes there.
type Caches interface {
	// Restore replaces the cached directories of projectDir with the newest cache of b's key or,
	// when that has none, of its base key (buildcache.BaseKey: the project p's default branch,
	// read-only), and says which. Any error means the build runs cold; an error wrapping
	// buildcache.ErrNoCache means there was no cache, and the directories are left as they are.
	Restore(ctx context.Context, b *kiln.Build, p *kiln.Project, projectDir *nofollow.Dir) (Restored, buildcache.Stats, error)
	// Save stores the cached directories of projectDir as b's cache of its own key, replacing
	// older ones, and returns its compressed size. The caller has b still running.
	Save(ctx context.Context, b *kiln.Build, projectDir *nofollow.Dir) (size int64, st buildcache.Stats, err error)
	// Dirs are the directories of a project the cache holds.
	Dirs() []string
}

// Restored says which cache a build started from: the build that saved it, and the ref (branch or
// stream) of its key, the build's own or its project's default one.
type Restored struct {
	BuildID string
	Ref     string
}

// StoredCaches is the runner's Caches in the service's own process: caches in the service's
// artifact store, each organization's capped at MaxPerOrg bytes (oldest evicted first; 0: no cap).
type StoredCaches struct {
	Cache     *buildcache.Cache
	MaxPerOrg int64
	Logger    *slog.Logger
}

var _ Caches = StoredCaches{}

func (c StoredCaches) Restore(ctx context.Context, b *kiln.Build, p *kiln.Project, projectDir *nofollow.Dir) (Restored, buildcache.Stats, error) {
	e, ref, st, err := c.Cache.RestoreFor(ctx, b, p, projectDir)
	return Restored{BuildID: e.BuildID, Ref: ref}, st, err
}

func (c StoredCaches) Save(ctx context.Context, b *kiln.Build, projectDir *nofollow.Dir) (int64, buildcache.Stats, error) {
	e, st, err := c.Cache.Save(ctx, buildcache.KeyOf(b), b.ID, projectDir)
	if err != nil {
		return 0, st, err
	}
	c.Cache.Cap(ctx, b.OrganizationID, c.MaxPerOrg, e.ObjectKey, c.Logger)
	return e.Size, st, nil
}

func (c StoredCaches) Dirs() []string { return c.Cache.Dirs() }
