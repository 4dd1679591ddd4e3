package local

import (
	"github.com/kilnbuild/kiln/shared/kiln"
)

// OrgLimit tells how many builds of an organization may run at once on this machine. It is a
// function so that a per-organization value (a plan's) can take the place of the one setting.
type OrgLimit func(orgID string) int

// memoLimit remembers limit's answer for each organization: a plan is read once per choice.
func memoLimit(limit OrgLimit) OrgLimit {
	seen := map[string]int{}
	return func(orgID string) int {
		n, ok := seen[orgID]
		if !ok {
			n = limit(orgID)
			seen[orgID] = n
		}
		return n
	}
}

// pick chooses up to free builds to start next, in order. Organizations with pending builds take
// turns (round robin): each turn goes to the organization whose last turn is longest ago (one that
// never had a turn first; between equals, the one with the oldest pending build), among those
// below their limit of running builds, and it gives its oldest pending build. So one
// organization's backlog never holds back another's builds, and an organization at its limit
// waits while the others' builds run. When every organization has one build pending, builds start
// oldest first.
//
// pending is the queue, oldest first; running counts each organization's running builds; turns
// holds the number of each organization's last turn (missing or 0: none; numbers grow with
// time). None of them is changed: the caller records the turns of the builds it starts.
func pick(pending []*kiln.Build, running map[string]int, turns map[string]uint64, limit OrgLimit, free int) []*kiln.Build {
	queues := map[string][]*kiln.Build{}
	var orgs []string // by their oldest pending build
	for _, b := range pending {
		if _, seen := queues[b.OrganizationID]; !seen {
			orgs = append(orgs, b.OrganizationID)
		}
		queues[b.OrganizationID] = append(queues[b.OrganizationID], b)
	}
	counts, last := map[string]int{}, map[string]uint64{}
	var turn uint64
	for _, org := range orgs {
		counts[org], last[org] = running[org], turns[org]
		turn = max(turn, turns[org])
	}
	var picked []*kiln.Build
	for len(picked) < free {
		org, ok := nextTurn(orgs, queues, counts, last, limit)
		if !ok {
			break
		}
		picked = append(picked, queues[org][0])
		queues[org] = queues[org][1:]
		counts[org]++
		turn++
		last[org] = turn
	}
	return picked
}

// nextTurn finds the organization whose turn it is: of those with a pending build and room under
// their limit, the one whose last turn is oldest; orgs is in the order that breaks ties.
func nextTurn(orgs []string, queues map[string][]*kiln.Build, counts map[string]int, last map[string]uint64, limit OrgLimit) (string, bool) {
	best, found := "", false
	for _, org := range orgs {
		if len(queues[org]) == 0 || counts[org] >= limit(org) {
			continue
		}
		if !found || last[org] < last[best] {
			best, found = org, true
		}
	}
	return best, found
}
