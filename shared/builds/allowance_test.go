package builds

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/plans"
	"github.com/kilnbuild/kiln/shared/store"
)

// noWorkflow starts and stops nothing.
type noWorkflow struct{}

func (noWorkflow) Start(context.Context, *kiln.Build) error { return nil }
func (noWorkflow) Stop(context.Context, *kiln.Build) error  { return nil }

// skipsHeard is SkipEvents that remembers what it was told.
type skipsHeard struct {
	mu   sync.Mutex
	told []*kiln.SkippedTrigger
}

func (s *skipsHeard) TriggerSkipped(_ context.Context, sk *kiln.SkippedTrigger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.told = append(s.told, sk)
}

// TestTriggersOverTheAllowance: once a free organization's minutes of the month (UTC) are used,
// a manual trigger is plan_limit_reached and creates nothing; push and scheduled triggers are
// skipped, counted and told once each however often they repeat; the next month, or a plan
// change, lets builds start again.
func TestTriggersOverTheAllowance(t *testing.T) {
	ctx := context.Background()
	w := newLifecycleWorld(t)
	created, err := accounts.CreateOrganization(ctx, w.st, accounts.NewOrganization{Name: "Small", OwnerEmail: "o@small.example", OwnerName: "O", Plan: kiln.PlanFree}, w.now)
	if err != nil {
		t.Fatal(err)
	}
	w.org = created.Organization.ID
	p := &kiln.Project{ID: kiln.NewID(), OrganizationID: w.org, Name: "Game", SourceControl: kiln.SourceGitHub, RepoLink: "studio/game",
		InstallationID: "1", DefaultBranch: "main", UprojectPath: "Game.uproject", CreatedAt: w.now, UpdatedAt: w.now}
	if err := w.st.CreateProject(ctx, p, 0); err != nil {
		t.Fatal(err)
	}
	st := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: w.org, ProjectID: p.ID, Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping,
		UEVersion: "5.3", Trigger: kiln.TriggerScheduled, Schedule: "*/5 * * * *", Branch: "main", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), UpdatedAt: w.now}
	if err := w.st.CreateBuildSetting(ctx, st); err != nil {
		t.Fatal(err)
	}
	// March 2026: one build of 30 s uses the whole allowance of one minute.
	w.now = time.Date(2026, 3, 31, 23, 40, 0, 0, time.UTC)
	b := w.build(t, kiln.StatusPending)
	if _, err := w.lc.Claim(ctx, w.org, b.ID, holder); err != nil {
		t.Fatal(err)
	}
	w.now = w.now.Add(30 * time.Second)
	if _, err := w.lc.Complete(ctx, w.artifact(b)); err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return w.now }
	table := kiln.DefaultPlans()
	free := table[kiln.PlanFree]
	free.BuildMinutesPerMonth = 1
	table[kiln.PlanFree] = free
	heard := &skipsHeard{}
	svc := &Service{Store: w.st, Lifecycle: w.lc, Workflow: noWorkflow{}, Now: clock, Logger: w.lc.Logger,
		Allowance: &plans.Plans{Store: w.st, Table: table, Now: clock}, Skips: w.st, SkipEvents: heard}
	sched := &Scheduler{Store: w.st, Service: svc, Now: clock, Logger: w.lc.Logger}
	req := func(by, key string) TriggerRequest {
		return TriggerRequest{Project: p, Setting: st, TriggeredBy: by, IdempotencyKey: key, Fingerprint: key}
	}
	builds := func() int {
		n := 0
		for _, status := range kiln.BuildStatuses {
			got, _, err := w.st.ListBuilds(ctx, w.org, storeFilter(status), storePage())
			if err != nil {
				t.Fatal(err)
			}
			n += len(got)
		}
		return n
	}
	before := builds()

	_, _, err = svc.Trigger(ctx, req("user:u1", ""))
	if !kiln.IsCode(err, kiln.EPlanLimitReached) || !strings.Contains(kiln.ErrorMessage(err), "free plan") || !strings.Contains(kiln.ErrorMessage(err), "1 build minutes per month") {
		t.Fatalf("manual trigger: %v, want plan_limit_reached naming the limit and the plan", err)
	}
	for range 3 { // a push and its redeliveries
		if _, _, err := svc.Trigger(ctx, req("push:abc", "github-push:abc:"+st.ID)); !kiln.IsCode(err, kiln.EPlanLimitReached) {
			t.Fatalf("push trigger: %v", err)
		}
	}
	w.now = time.Date(2026, 3, 31, 23, 55, 30, 0, time.UTC)
	for range 3 { // ticks within the same slot
		sched.Tick(ctx)
	}
	if n := builds(); n != before {
		t.Fatalf("%d builds made over the allowance", n-before)
	}
	u, err := w.st.GetUsage(ctx, w.org, "2026-03")
	if err != nil {
		t.Fatal(err)
	}
	if u.Skipped[kiln.TriggerPush] != 1 || u.Skipped[kiln.TriggerScheduled] != 1 || u.Skipped[kiln.TriggerManual] != 0 {
		t.Fatalf("skipped: %v, want one push and one scheduled", u.Skipped)
	}
	if len(heard.told) != 2 || heard.told[0].Trigger != kiln.TriggerPush || heard.told[0].Commit != "" || heard.told[0].Branch != "main" ||
		heard.told[1].Trigger != kiln.TriggerScheduled || heard.told[1].BuildSettingID != st.ID || !strings.Contains(heard.told[1].Reason, "free plan") {
		t.Fatalf("told of %d skips: %+v", len(heard.told), heard.told)
	}

	// Midnight UTC: April's allowance is unused, the scheduler's next slot builds.
	w.now = time.Date(2026, 4, 1, 0, 0, 5, 0, time.UTC)
	sched.Tick(ctx)
	if n := builds(); n != before+1 {
		t.Fatalf("April's first slot made %d builds, want 1", n-before)
	}
	// Back in March terms a plan change lifts the limit at once.
	w.now = time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	if _, err := accounts.SetPlan(ctx, w.st, w.org, kiln.PlanPro, nil, w.now); err != nil {
		t.Fatal(err)
	}
	if _, created, err := svc.Trigger(ctx, req("user:u1", "")); err != nil || !created {
		t.Fatalf("manual trigger on pro: %v", err)
	}
}

func storeFilter(status kiln.BuildStatus) store.BuildFilter { return store.BuildFilter{Status: status} }
func storePage() store.Page                                 { return store.Page{Limit: store.MaxLimit} }
