package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/plans"
)

// startNothing is a workflow that starts nothing: the benchmark measures the trigger itself.
type startNothing struct{}

func (startNothing) Start(context.Context, *kiln.Build) error { return nil }

func (startNothing) Stop(context.Context, *kiln.Build) error { return nil }

// BenchmarkTriggerPlanChecks measures what the plan checks add to a trigger: triggers of a free
// organization with build minutes left (the checks read the organization and the month's usage)
// alternate with triggers of the same setting without plan checks, in the same run, on SQLite.
// Target: the checks' p99 < 1 ms.
func BenchmarkTriggerPlanChecks(b *testing.B) {
	ctx := context.Background()
	st, p, s := benchProject(b, func(*kiln.BuildSetting) {})
	if _, err := accounts.SetPlan(ctx, st, p.OrganizationID, kiln.PlanFree, nil, time.Now()); err != nil {
		b.Fatal(err)
	}
	// This month's usage exists (a build of 100 minutes), so the check reads a real row.
	ran := &kiln.Build{ID: kiln.NewID(), OrganizationID: p.OrganizationID, ProjectID: p.ID, BuildSettingID: s.ID, Status: kiln.StatusRunning,
		Platform: s.Platform, BuildType: s.BuildType, Branch: "x", UEVersion: "5.3", TriggeredBy: "cron", CreatedAt: time.Now().UTC()}
	started := time.Now().UTC().Add(-100 * time.Minute)
	ran.StartedAt = &started
	if err := st.CreateBuild(ctx, ran); err != nil {
		b.Fatal(err)
	}
	if err := ran.Transition(kiln.StatusComplete, time.Now(), ""); err != nil {
		b.Fatal(err)
	}
	if err := st.UpdateBuild(ctx, ran, kiln.StatusRunning, kiln.AllBuildFields); err != nil {
		b.Fatal(err)
	}
	lifecycle := &builds.Lifecycle{Builds: st, Projects: st, Artifacts: st, Logger: e2e.DiscardLogger()}
	orgPlans := &plans.Plans{Store: st}
	bare := &builds.Service{Store: st, Lifecycle: lifecycle, Workflow: startNothing{}, Logger: e2e.DiscardLogger()}
	checked := &builds.Service{Store: st, Lifecycle: lifecycle, Workflow: startNothing{}, Logger: e2e.DiscardLogger(),
		Allowance: orgPlans, Skips: st}

	var without, with, checks []time.Duration
	trigger := func(svc *builds.Service, i int, into *[]time.Duration) {
		t0 := time.Now()
		if _, _, err := svc.Trigger(ctx, builds.TriggerRequest{Project: p, Setting: s, Branch: fmt.Sprintf("b%d", i), TriggeredBy: "user:u"}); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, time.Since(t0))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		trigger(bare, 2*i, &without)
		trigger(checked, 2*i+1, &with)
		t0 := time.Now()
		if err := orgPlans.CheckMinutes(ctx, p.OrganizationID); err != nil {
			b.Fatal(err)
		}
		checks = append(checks, time.Since(t0))
	}
	b.StopTimer()
	pct := percentile[time.Duration]
	b.ReportMetric(float64(pct(checks, 99).Microseconds()), "checks-p99-µs")
	b.ReportMetric(float64(pct(with, 50))/float64(pct(without, 50)), "with/without-p50")
	fmt.Printf("\ntrigger with plan checks vs without, %d each: p50 %v vs %v (%.2f×), p99 %v vs %v; the checks alone p50 %v, p99 %v (target p99 < 1ms)\n",
		len(with), pct(with, 50).Round(time.Microsecond), pct(without, 50).Round(time.Microsecond), float64(pct(with, 50))/float64(pct(without, 50)),
		pct(with, 99).Round(time.Microsecond), pct(without, 99).Round(time.Microsecond),
		pct(checks, 50).Round(time.Microsecond), pct(checks, 99).Round(time.Microsecond))
}
