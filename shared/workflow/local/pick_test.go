package local

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// queueOf makes a pending queue, oldest first, from names such as "a1": organization "a"'s build
// "a1".
func queueOf(names ...string) []*kiln.Build {
	out := make([]*kiln.Build, len(names))
	for i, n := range names {
		out[i] = &kiln.Build{ID: n, OrganizationID: n[:1], Status: kiln.StatusPending}
	}
	return out
}

func backlog(org string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", org, i+1)
	}
	return out
}

func same(n int) OrgLimit { return func(string) int { return n } }

func TestPick(t *testing.T) {
	cases := []struct {
		name    string
		pending []string
		running map[string]int
		turns   map[string]uint64
		limit   OrgLimit
		free    int
		want    []string
	}{
		{name: "NothingPending", free: 2, limit: same(2), want: nil},
		{name: "NoFreeWorker", pending: []string{"a1"}, free: 0, limit: same(2), want: nil},
		{name: "OneOrganizationOldestFirst", pending: []string{"a1", "a2", "a3"}, free: 2, limit: same(5),
			want: []string{"a1", "a2"}},
		{name: "ABacklogDoesNotHoldBackAnotherOrganization", pending: append(backlog("a", 10), "b01"), free: 2, limit: same(2),
			want: []string{"a01", "b01"}},
		{name: "OneBuildEachStartsOldestFirst", pending: []string{"c1", "a1", "b1"}, free: 3, limit: same(5),
			want: []string{"c1", "a1", "b1"}},
		{name: "TurnGoesToTheLongestWaiting", pending: append(backlog("a", 3), "b01", "b02"), turns: map[string]uint64{"a": 7, "b": 3}, free: 3, limit: same(5),
			want: []string{"b01", "a01", "b02"}},
		{name: "NeverServedGoesFirst", pending: []string{"a1", "b1", "c1"}, turns: map[string]uint64{"a": 2, "b": 5}, free: 3, limit: same(5),
			want: []string{"c1", "a1", "b1"}},
		{name: "TurnsOfOrganizationsWithNothingPendingDoNotMatter", pending: []string{"a1", "c1"}, turns: map[string]uint64{"a": 4, "b": 9, "c": 6}, free: 3, limit: same(5),
			want: []string{"a1", "c1"}},
		{name: "AnOrganizationAtItsCapWaits", pending: []string{"a3", "a4", "b1"}, running: map[string]int{"a": 2}, free: 2, limit: same(2),
			want: []string{"b1"}},
		{name: "EveryOrganizationAtItsCap", pending: []string{"a3", "b3"}, running: map[string]int{"a": 2, "b": 2}, free: 4, limit: same(2),
			want: nil},
		{name: "PicksCountTowardsTheCap", pending: []string{"a1", "a2", "a3"}, running: map[string]int{"a": 1}, free: 3, limit: same(2),
			want: []string{"a1"}},
		{name: "PerOrganizationLimits", pending: []string{"a1", "a2", "b1", "b2", "b3"}, free: 5,
			limit: func(org string) int { return map[string]int{"a": 1, "b": 3}[org] },
			want:  []string{"a1", "b1", "b2", "b3"}},
		{name: "ZeroLimitNeverRuns", pending: []string{"a1", "b1"}, free: 2,
			limit: func(org string) int { return map[string]int{"b": 1}[org] },
			want:  []string{"b1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pending := queueOf(c.pending...)
			before := slices.Clone(pending)
			running := map[string]int{}
			for k, v := range c.running {
				running[k] = v
			}
			turns := maps.Clone(c.turns)
			got := pick(pending, running, turns, c.limit, c.free)
			var ids []string
			for _, b := range got {
				ids = append(ids, b.ID)
			}
			if !slices.Equal(ids, c.want) {
				t.Fatalf("picked %v, want %v", ids, c.want)
			}
			if !slices.Equal(pending, before) || len(running) != len(c.running) || !maps.Equal(turns, c.turns) {
				t.Fatalf("pick changed its inputs")
			}
			for k, v := range c.running {
				if running[k] != v {
					t.Fatalf("pick changed the running counts")
				}
			}
		})
	}
}

// TestPickTwoWorkers plays a machine with two workers, one build ending at a time, oldest running
// first: organization b's one build starts before a's third although a queued ten builds first.
func TestPickTwoWorkers(t *testing.T) {
	pending := queueOf(append(backlog("a", 10), "b01")...)
	running := map[string]int{}
	turns := map[string]uint64{}
	var started, active []*kiln.Build
	for len(pending) > 0 {
		next := pick(pending, running, turns, same(2), 2-len(active))
		for _, b := range next {
			started = append(started, b)
			turns[b.OrganizationID] = uint64(len(started))
			active = append(active, b)
			running[b.OrganizationID]++
			pending = slices.DeleteFunc(pending, func(p *kiln.Build) bool { return p == b })
		}
		if len(next) == 0 && len(active) == 0 {
			t.Fatal("nothing runs and nothing starts")
		}
		done := active[0] // the oldest running build ends
		active = active[1:]
		running[done.OrganizationID]--
	}
	order := map[string]int{}
	for i, b := range started {
		order[b.ID] = i
	}
	if order["b01"] > order["a03"] {
		t.Fatalf("start order %v: b's build after a's third", order)
	}
	if len(started) != 11 {
		t.Fatalf("%d builds started, want 11", len(started))
	}
}
