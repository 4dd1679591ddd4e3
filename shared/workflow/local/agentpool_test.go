package local

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// poolBuild stores a pending build for an agent pool, created at.
func poolBuild(t *testing.T, st *sqlitestore.Store, pool string, at time.Time) *kiln.Build {
	t.Helper()
	var gen kiln.IDGenerator
	b := &kiln.Build{ID: gen.New(at), OrganizationID: kiln.NewID(), ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
		Status: kiln.StatusPending, Platform: kiln.PlatformWin64, BuildType: kiln.BuildTypeShipping, Branch: "main",
		UEVersion: "5.4", TriggeredBy: "cron", AgentPool: pool, CreatedAt: at.UTC().Truncate(time.Millisecond)}
	if err := st.CreateBuild(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBuildsForAnAgentPoolWaitForAnAgent: the local workers never take a build for an agent
// pool, even with nothing else to do; one that waited longer than AgentWait fails with a reason
// naming its pool, a younger one keeps waiting.
func TestBuildsForAnAgentPoolWaitForAnAgent(t *testing.T) {
	defer func(w time.Duration) { watchEvery = w }(watchEvery)
	watchEvery = 20 * time.Millisecond
	st := openStore(t)
	now := time.Now()
	stale := poolBuild(t, st, "win64", now.Add(-2*time.Minute))
	fresh := poolBuild(t, st, "win64", now.Add(-time.Second))
	local := newBuild(t, st, kiln.NewID(), kiln.StatusPending, now)
	r := &fakeRunner{st: st}
	w := New(st, &builds.Lifecycle{Builds: st, Projects: st}, r, 2, nil)
	w.AgentWait = time.Minute
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown(context.Background())

	waitStatus(t, st, local, kiln.StatusComplete)
	got := waitStatus(t, st, stale, kiln.StatusFailed)
	if want := "no agent in pool win64 claimed the build within 1m0s"; got.FailureReason != want {
		t.Fatalf("reason %q, want %q", got.FailureReason, want)
	}
	w.Start(context.Background(), fresh) // woken, the workers still leave it
	waitStatus(t, st, local, kiln.StatusComplete)
	if b, _ := st.GetBuild(context.Background(), fresh.OrganizationID, fresh.ID); b.Status != kiln.StatusPending || b.Host != "" {
		t.Fatalf("the younger build for the pool is %s on %q, want pending", b.Status, b.Host)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Equal(r.order, []string{local.ID}) {
		t.Fatalf("the workers ran %v, want only %s", r.order, local.ID)
	}
}

// TestRestartLeavesRemoteHostsBuildsRunning: at start, the builds a previous run left running
// here fail as interrupted, but a build an agent holds (with a host credential) runs on.
func TestRestartLeavesRemoteHostsBuildsRunning(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	local := newBuild(t, st, kiln.NewID(), kiln.StatusRunning, time.Now().Add(-time.Minute))
	remote := poolBuild(t, st, "win", time.Now().Add(-time.Minute))
	lc := &builds.Lifecycle{Builds: st, Projects: st}
	if _, err := lc.ClaimHost(ctx, remote.OrganizationID, remote.ID, kiln.AgentHost("a1"), "hash", time.Minute); err != nil {
		t.Fatal(err)
	}
	w := New(st, lc, &fakeRunner{st: st}, 1, nil)
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown(ctx)
	waitStatus(t, st, local, kiln.StatusFailed)
	if b, _ := st.GetBuild(ctx, remote.OrganizationID, remote.ID); b.Status != kiln.StatusRunning {
		t.Fatalf("the agent's build is %s after a restart, want running", b.Status)
	}
}
