package sfn

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// CapacityStore lists builds across organizations (store.Store).
type CapacityStore interface {
	QueuedBuildsAfter(ctx context.Context, status kiln.BuildStatus, afterID string, limit int) ([]*kiln.Build, error)
}

// Capacity shares the account's CodeBuild capacity (its concurrent-builds quota, Quota) between
// organizations by turns, as kiln serve shares its workers (workflow/local's pick): a build may
// take a CodeBuild host only while fewer than Quota builds hold one (reserved for their host or
// running on it) and it is among the next ones in turn. The turn order is by how many builds
// each organization holds: an organization's k-th waiting build (oldest first) comes after every
// other organization's builds that would make it hold fewer, so an organization with one build
// waits behind at most one build of each other organization, never behind another's backlog.
// CodeBuild itself starts queued builds in no predictable order
// (https://docs.aws.amazon.com/codebuild/latest/userguide/builds-working.html), so kiln does not
// hand it more than its quota.
//
// It is a Slots: the claim of a CodeBuild build checks it after the plan's slots, and a build it
// refuses waits pending (HostWait) and claims again.
type Capacity struct {
	Store CapacityStore
	// Quota is how many builds may hold a CodeBuild host at once (KILN_CODEBUILD_QUOTA); 0: no
	// limit.
	Quota int
}

// capacityPage is how many builds one listing reads.
const capacityPage = 500

// MayRun tells whether b may take a CodeBuild host now.
func (c *Capacity) MayRun(ctx context.Context, b *kiln.Build) (bool, error) {
	if c == nil || c.Quota <= 0 || strings.HasPrefix(b.Host, HostCodeBuild) {
		return true, nil // no quota, or b holds its host already (a claim again after CodeBuild refused it)
	}
	held := map[string]int{} // builds holding a host, per organization
	total := 0
	var waiting []*kiln.Build
	for _, status := range []kiln.BuildStatus{kiln.StatusRunning, kiln.StatusPending} {
		after := ""
		for {
			page, err := c.Store.QueuedBuildsAfter(ctx, status, after, capacityPage)
			if err != nil {
				return false, fmt.Errorf("capacity check: list %s builds: %w", status, err)
			}
			for _, q := range page {
				switch {
				case strings.HasPrefix(q.Host, HostCodeBuild):
					held[q.OrganizationID]++
					total++
				case q.Status == kiln.StatusPending && q.Host == "" && q.AgentPool == "":
					waiting = append(waiting, q)
				}
			}
			if len(page) < capacityPage {
				break
			}
			after = page[len(page)-1].ID
		}
	}
	free := c.Quota - total
	if free <= 0 {
		return false, nil
	}
	return slices.Contains(nextInTurn(waiting, held, free), b.ID), nil
}

// nextInTurn answers the ids of the free builds of waiting (oldest first by id) whose turn comes
// first: an organization's k-th waiting build has the turn held[org]+k; between equal turns the
// organization with fewer builds waiting goes first (a one-build organization before another's
// backlog), then the older build.
func nextInTurn(waiting []*kiln.Build, held map[string]int, free int) []string {
	type turn struct {
		n, backlog int
		id         string
	}
	slices.SortFunc(waiting, func(a, b *kiln.Build) int { return cmp.Compare(a.ID, b.ID) })
	backlog := map[string]int{}
	for _, w := range waiting {
		backlog[w.OrganizationID]++
	}
	seen := map[string]int{}
	turns := make([]turn, 0, len(waiting))
	for _, w := range waiting {
		turns = append(turns, turn{held[w.OrganizationID] + seen[w.OrganizationID], backlog[w.OrganizationID], w.ID})
		seen[w.OrganizationID]++
	}
	slices.SortFunc(turns, func(a, b turn) int {
		return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.backlog, b.backlog), cmp.Compare(a.id, b.id))
	})
	var ids []string
	for _, t := range turns[:min(free, len(turns))] {
		ids = append(ids, t.id)
	}
	return ids
}
