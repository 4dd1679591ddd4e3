package plans_test

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/plans"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

type fixture struct {
	st  *sqlitestore.Store
	org *kiln.Organization
	p   *plans.Plans
	now time.Time
}

func newFixture(t *testing.T, plan kiln.Plan) *fixture {
	t.Helper()
	st := storefixture.SQLite(t)
	org, _ := storefixture.Org(t, st, plan, time.Now())
	f := &fixture{st: st, org: org}
	f.p = &plans.Plans{Store: st, Now: func() time.Time { return f.now }}
	return f
}

// build stores a build in status, created at the given minute of a fixed hour (ids sort by
// creation), for the service's hosts or an agent pool.
func (f *fixture) build(t *testing.T, status kiln.BuildStatus, pool string) *kiln.Build {
	t.Helper()
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: f.org.ID, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(), Status: status,
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main", AgentPool: pool, CreatedAt: time.Now().UTC()}
	if status == kiln.StatusRunning {
		at := time.Now().UTC()
		b.StartedAt = &at
	}
	if err := f.st.CreateBuild(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // the next id sorts after this one
	return b
}

// endBuild ends a running build that ran d, at end.
func (f *fixture) endBuild(t *testing.T, b *kiln.Build, end time.Time, d time.Duration) {
	t.Helper()
	start := end.Add(-d)
	b.StartedAt = &start
	if err := b.Transition(kiln.StatusComplete, end, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.st.UpdateBuild(context.Background(), b, kiln.StatusRunning, kiln.AllBuildFields); err != nil {
		t.Fatal(err)
	}
}

// TestCheckMinutes: the allowance is per calendar month (UTC) of the builds' ends; pro and
// enterprise have none.
func TestCheckMinutes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, kiln.PlanFree)
	end := time.Date(2026, 5, 31, 23, 59, 0, 0, time.UTC)
	f.endBuild(t, f.build(t, kiln.StatusRunning, ""), end, 299*time.Minute)
	cases := []struct {
		name    string
		now     time.Time
		plan    kiln.Plan
		another time.Duration // one more build ending at now, of this length
		refused bool
	}{
		{"299 of 300 used", end.Add(30 * time.Second), kiln.PlanFree, 0, false},
		{"300 of 300 used", end.Add(40 * time.Second), kiln.PlanFree, time.Second, true},
		{"a new month (UTC) starts afresh", time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), kiln.PlanFree, 0, false},
		{"pro has no allowance", end.Add(50 * time.Second), kiln.PlanPro, 0, false},
		{"enterprise has none", end.Add(50 * time.Second), kiln.PlanEnterprise, 0, false},
	}
	for _, c := range cases {
		if c.another > 0 {
			f.endBuild(t, f.build(t, kiln.StatusRunning, ""), c.now, c.another)
		}
		if _, err := accounts.SetPlan(ctx, f.st, f.org.ID, c.plan, nil, c.now); err != nil {
			t.Fatal(err)
		}
		f.now = c.now
		err := f.p.CheckMinutes(ctx, f.org.ID)
		if got := kiln.IsCode(err, kiln.EPlanLimitReached); got != c.refused || (!c.refused && err != nil) {
			t.Errorf("%s: %v, refused %v", c.name, err, c.refused)
		}
	}
}

// TestMayRun: under a concurrency limit a pending build may start only while the organization's
// running builds and its pending builds queued before it (not its agents') leave room.
func TestMayRun(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, kiln.PlanEnterprise)
	f.build(t, kiln.StatusPending, "win") // older, but waiting for an agent: never in the way
	oldest := f.build(t, kiln.StatusPending, "")
	middle := f.build(t, kiln.StatusPending, "")
	newest := f.build(t, kiln.StatusPending, "")
	cases := []struct {
		limit   int
		running int
		want    map[*kiln.Build]bool
	}{
		{0, 3, map[*kiln.Build]bool{oldest: true, middle: true, newest: true}}, // no limit
		{1, 0, map[*kiln.Build]bool{oldest: true, middle: false, newest: false}},
		{2, 0, map[*kiln.Build]bool{oldest: true, middle: true, newest: false}},
		{2, 1, map[*kiln.Build]bool{oldest: true, middle: false, newest: false}},
		{2, 2, map[*kiln.Build]bool{oldest: false, middle: false, newest: false}},
	}
	var running []*kiln.Build
	for _, c := range cases {
		for len(running) < c.running {
			running = append(running, f.build(t, kiln.StatusRunning, ""))
		}
		for len(running) > c.running {
			f.endBuild(t, running[len(running)-1], time.Now().UTC(), time.Second)
			running = running[:len(running)-1]
		}
		limit := c.limit
		if _, err := accounts.SetPlan(ctx, f.st, f.org.ID, kiln.PlanEnterprise, &limit, time.Now()); err != nil {
			t.Fatal(err)
		}
		for b, want := range c.want {
			got, err := f.p.MayRun(ctx, b)
			if err != nil || got != want {
				t.Errorf("limit %d, %d running: MayRun(%s) = %v, %v; want %v", c.limit, c.running, b.ID, got, err, want)
			}
		}
	}
}

// TestMayRunCountsBuildsWaitingForKilnsHosts: a build waiting in kiln's hosted Windows pool took
// its slot when it entered the pool, so it holds that slot until a host claims it, even against
// a build queued before it; a build waiting for the organization's own agents holds none.
func TestMayRunCountsBuildsWaitingForKilnsHosts(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, kiln.PlanFree) // one build at a time
	older := f.build(t, kiln.StatusPending, "")
	f.build(t, kiln.StatusPending, "win") // the organization's own agents: never in the way
	if ok, err := f.p.MayRun(ctx, older); err != nil || !ok {
		t.Fatalf("with only an agent pool's build waiting: MayRun = %v, %v; want true", ok, err)
	}
	f.build(t, kiln.StatusPending, kiln.HostedPoolWin64)
	if ok, err := f.p.MayRun(ctx, older); err != nil || ok {
		t.Errorf("with a build waiting for kiln's hosted Windows hosts: MayRun = %v, %v; want false (its slot is taken)", ok, err)
	}
}
