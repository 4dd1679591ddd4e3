package plans

import (
	"context"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// MayRun tells whether the pending build b may take a slot of its organization now: always
// without a concurrency limit; with one, only while the organization's running builds and its
// pending builds queued before b (on the service's hosts, not its agents') leave room, so an
// organization's builds start oldest first as slots free. A build waiting in kiln's hosted pool
// passed this check already and holds its slot until a host claims it, whatever its age, as
// does a build reserved for a CodeBuild host that has not started yet (pending, its Host set). The
// in-process workflow chooses with pick instead; this is the AWS claim's check.
func (p *Plans) MayRun(ctx context.Context, b *kiln.Build) (bool, error) {
	limit, err := p.ConcurrentBuilds(ctx, b.OrganizationID)
	if err != nil || limit == 0 {
		return err == nil, err
	}
	running, err := p.Running(ctx, b.OrganizationID, limit)
	if err != nil {
		return false, fmt.Errorf("plan check: count running builds: %w", err)
	}
	if running >= limit {
		return false, nil
	}
	ahead := 0
	pg := store.Page{Limit: store.MaxLimit}
	for {
		items, next, err := p.Store.ListBuilds(ctx, b.OrganizationID, store.BuildFilter{Status: kiln.StatusPending}, pg)
		if err != nil {
			return false, fmt.Errorf("plan check: list pending builds: %w", err)
		}
		for _, q := range items {
			if q.ID != b.ID && (kiln.ReservedPool(q.AgentPool) || q.Host != "" && q.AgentPool == "" || q.ID < b.ID && q.AgentPool == "") {
				ahead++
			}
		}
		if running+ahead >= limit {
			return false, nil
		}
		if next == "" {
			return true, nil
		}
		pg.After = next
	}
}
