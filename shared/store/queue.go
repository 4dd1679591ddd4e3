package store

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// QueuePager is the part of a store that pages through the work queue.
type QueuePager interface {
	QueuedBuildsAfter(ctx context.Context, status kiln.BuildStatus, afterID string, limit int) ([]*kiln.Build, error)
}

// ReadQueue reads the builds in a status across all organizations, oldest first, page by page,
// up to about max of them (whole pages): the queue a scheduler chooses from.
func ReadQueue(ctx context.Context, q QueuePager, status kiln.BuildStatus, max int) ([]*kiln.Build, error) {
	var all []*kiln.Build
	after := ""
	for len(all) < max {
		page, err := q.QueuedBuildsAfter(ctx, status, after, MaxLimit)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < MaxLimit {
			break
		}
		after = page[len(page)-1].ID
	}
	return all, nil
}
