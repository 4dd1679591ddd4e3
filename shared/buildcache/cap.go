package buildcache

import (
	"context"
	"log/slog"
)

// Cap keeps org's caches under maxBytes (0: no cap) after a build saved keep, logging what it
// removed. A failure is logged: it never fails the build that saved.
func (c *Cache) Cap(ctx context.Context, org string, maxBytes int64, keep string, logger *slog.Logger) {
	if maxBytes <= 0 {
		return
	}
	if logger == nil {
		logger = slog.Default()
	}
	removed, err := c.Evict(ctx, org, maxBytes, keep)
	if err != nil {
		logger.WarnContext(ctx, "evict build caches", slog.String("org_id", org), slog.String("error", err.Error()))
	}
	for _, e := range removed {
		logger.InfoContext(ctx, "build cache evicted", slog.String("org_id", org), slog.String("key", e.ObjectKey), slog.Int64("bytes", e.Size))
	}
}
