package buildcache

import (
	"context"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Objects lists every object under the caches of org, oldest first, with the build that uploaded
// it where its key names one: saved caches, and uploads of running builds not saved yet.
func (c *Cache) Objects(ctx context.Context, org string) ([]Entry, error) {
	prefix, err := orgPrefix(org)
	if err != nil {
		return nil, err
	}
	return c.orgEntries(ctx, prefix)
}

// Discard removes the cache build b uploaded, if any (nothing to remove is no error).
func (c *Cache) Discard(ctx context.Context, b *kiln.Build) (string, error) {
	key := KeyOf(b)
	if key.Validate() != nil {
		return "", nil // a build without a cache key uploads no cache
	}
	objectKey, err := ObjectKey(key, b.ID)
	if err != nil {
		return "", err
	}
	return objectKey, c.store.Delete(ctx, objectKey)
}

// Discarder removes the cache a build uploaded when the build ends without completing (failed,
// cancelled, past its time limit, its host silent, superseded): that cache was never saved, so
// no later build restores it and it does not count in the organization's usage. It hears of
// builds that ended (builds.Ended).
type Discarder struct {
	Cache  *Cache
	Logger *slog.Logger
}

// BuildEnded removes the cache of b unless b completed.
func (d Discarder) BuildEnded(ctx context.Context, b *kiln.Build) {
	if b.Status == kiln.StatusComplete || d.Cache == nil {
		return
	}
	logger := d.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if key, err := d.Cache.Discard(ctx, b); err != nil {
		logger.WarnContext(ctx, "remove the build cache of a build that did not complete", slog.String("build_id", b.ID),
			slog.String("org_id", b.OrganizationID), slog.String("key", key), slog.String("error", err.Error()))
	}
}
