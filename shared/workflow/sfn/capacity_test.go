package sfn

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// TestCapacityTakesTurnsByOrganization: with the account's CodeBuild quota full, no build may
// take a host; with room, the builds whose turn comes first may: an organization holding fewer
// hosts goes before another's backlog, between equal turns the organization with fewer builds
// waiting, and within an organization the oldest goes first. A build
// holding its host already (claimed again after CodeBuild refused it) keeps it.
func TestCapacityTakesTurnsByOrganization(t *testing.T) {
	for _, tt := range []struct {
		name  string
		quota int
		// held and waiting are per organization: builds holding a CodeBuild host (running, or
		// reserved pending) and builds waiting for one, oldest first.
		held    map[string]int
		waiting map[string]int
		want    map[string][]bool // per organization, per waiting build: may it take a host now
	}{
		{"Full", 2, map[string]int{"a": 2}, map[string]int{"a": 1, "b": 1}, map[string][]bool{"a": {false}, "b": {false}}},
		{"TheOtherOrganizationFirst", 3, map[string]int{"a": 2}, map[string]int{"a": 3, "b": 1},
			map[string][]bool{"a": {false, false, false}, "b": {true}}},
		{"TurnsAcross", 4, map[string]int{}, map[string]int{"a": 3, "b": 2, "c": 1},
			map[string][]bool{"a": {true, false, false}, "b": {true, true}, "c": {true}}}, // between equal turns, the smaller backlog first
		{"OldestFirstWithinOne", 2, map[string]int{}, map[string]int{"a": 3}, map[string][]bool{"a": {true, true, false}}},
		{"NoQuota", 0, map[string]int{"a": 5}, map[string]int{"a": 2}, map[string][]bool{"a": {true, true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := storefixture.SQLite(t)
			at := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
			orgs := map[string]string{}
			for _, name := range []string{"a", "b", "c"} {
				org, _ := storefixture.Org(t, st, "", at)
				orgs[name] = org.ID
			}
			for name, n := range tt.held {
				for i := range n {
					status := kiln.StatusRunning
					if i%2 == 1 {
						status = kiln.StatusPending // reserved for its host, not started yet
					}
					at = at.Add(time.Second)
					storefixture.Build(t, st, orgs[name], status, at, func(b *kiln.Build) { b.Host = HostPrefix + fmt.Sprint(name, i) })
				}
			}
			waiting := map[string][]*kiln.Build{}
			for range 3 { // interleaved in time: each organization's k-th build is about as old
				for _, name := range []string{"a", "b", "c"} {
					if len(waiting[name]) < tt.waiting[name] {
						at = at.Add(time.Second)
						waiting[name] = append(waiting[name], storefixture.Build(t, st, orgs[name], kiln.StatusPending, at))
					}
				}
			}
			c := &Capacity{Store: st, Quota: tt.quota}
			for name, list := range waiting {
				for i, b := range list {
					ok, err := c.MayRun(ctx, b)
					if err != nil {
						t.Fatal(err)
					}
					if ok != tt.want[name][i] {
						t.Errorf("organization %s's build %d may take a host: %v, want %v", name, i, ok, tt.want[name][i])
					}
				}
			}
			held := storefixture.Build(t, st, orgs["a"], kiln.StatusPending, at.Add(time.Second), func(b *kiln.Build) { b.Host = HostCodeBuild })
			if ok, err := c.MayRun(ctx, held); err != nil || !ok {
				t.Errorf("a build holding its host already: %v %v, want it kept", ok, err)
			}
		})
	}
}
