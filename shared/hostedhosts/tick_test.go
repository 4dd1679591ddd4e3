package hostedhosts

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// fakeMetrics records the published values.
type fakeMetrics struct {
	values []int
	err    error
}

func (m *fakeMetrics) PublishWaiting(_ context.Context, n int) error {
	m.values = append(m.values, n)
	return m.err
}

// TestReaperTick: each tick publishes the hosted pool's pending builds and terminates, through
// the Auto Scaling API with the capacity lowered, the hosts whose build ended, and idle hosts
// past the idle limit while nothing waits; busy, fresh and not-in-service hosts stay.
func TestReaperTick(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := newStandIns(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	var gen kiln.IDGenerator
	build := func(org, pool string, status kiln.BuildStatus, host string) *kiln.Build {
		b := &kiln.Build{ID: gen.New(now), OrganizationID: org, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
			Status: status, Platform: kiln.PlatformWin64, BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.4",
			AgentPool: pool, Host: host, TriggeredBy: "cron", CreatedAt: now}
		if status == kiln.StatusRunning {
			b.StartedAt = &now
		}
		if status.Terminal() {
			b.StartedAt, b.FinishedAt = &now, &now
		}
		if err := st.CreateBuild(ctx, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	claim := func(id string, b *kiln.Build, at time.Time) {
		if err := st.ClaimHostedHost(ctx, &kiln.HostedHost{ID: id, SeenAt: at, ClaimedAt: &at, OrganizationID: b.OrganizationID, BuildID: b.ID}); err != nil {
			t.Fatal(err)
		}
	}
	see := func(id string, at time.Time) {
		if _, err := st.SeeHostedHost(ctx, id, at); err != nil {
			t.Fatal(err)
		}
	}
	var terminated []string
	launch := func(id, state string) {
		s.asg.Launch(id, state, func() { terminated = append(terminated, id) })
	}
	orgA, orgB := kiln.NewID(), kiln.NewID()
	// Builds: what the hosts hold, and one of an organization's pool (not counted).
	ended := build(orgA, kiln.HostedPoolWin64, kiln.StatusComplete, "ec2:i-ended")
	running := build(orgB, kiln.HostedPoolWin64, kiln.StatusRunning, "ec2:i-busy")
	stolen := build(orgA, kiln.HostedPoolWin64, kiln.StatusRunning, "ec2:i-other")
	build(orgA, "win-big", kiln.StatusPending, "")
	linuxWaiting := build(orgA, kiln.HostedPoolLinux, kiln.StatusPending, "") // the Linux hosts' pool: not counted
	launch("i-ended", StateInService)
	claim("i-ended", ended, now.Add(-time.Hour))
	launch("i-busy", StateInService)
	claim("i-busy", running, now.Add(-time.Hour))
	launch("i-lost", StateInService) // claimed a build another host holds
	claim("i-lost", stolen, now.Add(-time.Hour))
	launch("i-idle", StateInService)
	see("i-idle", now.Add(-DefaultIdleLimit-time.Second))
	launch("i-fresh", StateInService)
	launch("i-warming", "Warmed:Stopped")
	see("i-warming", now.Add(-24*time.Hour))

	metrics := &fakeMetrics{}
	clock := now
	r := &Reaper{Store: st, Pool: kiln.HostedPoolWin64, Hosts: s.group, Metrics: metrics, Now: func() time.Time { return clock },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

	// A build waits: the idle host stays for it.
	waitingBuild := build(orgB, kiln.HostedPoolWin64, kiln.StatusPending, "")
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	slices.Sort(terminated)
	if want := []string{"i-ended", "i-lost"}; !slices.Equal(terminated, want) || !slices.Equal(metrics.values, []int{1}) {
		t.Fatalf("tick with a build waiting: terminated %v, published %v; want %v, [1]", terminated, metrics.values, want)
	}
	if h, _ := st.GetHostedHost(ctx, "i-idle"); h.Claimed() {
		t.Fatal("the idle host was retired while a build waits")
	}

	// Nothing waits: the idle host goes, retired first; the fresh one stays until its limit.
	if _, err := st.GetBuild(ctx, orgB, waitingBuild.ID); err != nil {
		t.Fatal(err)
	}
	waitingBuild.Status = kiln.StatusSuperseded
	waitingBuild.FinishedAt = &now
	if err := st.UpdateBuild(ctx, waitingBuild, kiln.StatusPending, kiln.AllBuildFields); err != nil {
		t.Fatal(err)
	}
	terminated = nil
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"i-idle"}; !slices.Equal(terminated, want) || metrics.values[1] != 0 {
		t.Fatalf("tick with nothing waiting: terminated %v, published %v; want %v, 0", terminated, metrics.values, want)
	}
	if h, _ := st.GetHostedHost(ctx, "i-idle"); !h.Claimed() || h.BuildID != "" {
		t.Fatalf("the idle host was not retired before its end: %+v", h)
	}
	clock = now.Add(DefaultIdleLimit)
	terminated = nil
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"i-fresh"}; !slices.Equal(terminated, want) {
		t.Fatalf("tick past the fresh host's idle limit: terminated %v, want %v", terminated, want)
	}
	if got := s.asg.Instances(); !slices.Equal(got, []string{"i-busy", "i-warming"}) {
		t.Fatalf("left in the group: %v", got)
	}
	if n := s.asg.Replaced(); n != 0 {
		t.Fatalf("%d terminations kept the desired capacity", n)
	}

	// The metric failing does not stop the terminations, and the tick reports it.
	metrics.err = errors.New("throttled")
	running.Status, running.FinishedAt, running.FailureReason = kiln.StatusFailed, &now, "x"
	if err := st.UpdateBuild(ctx, running, kiln.StatusRunning, kiln.AllBuildFields); err != nil {
		t.Fatal(err)
	}
	terminated = nil
	if err := r.Tick(ctx); err == nil || !slices.Equal(terminated, []string{"i-busy"}) {
		t.Fatalf("tick with the metric failing: %v, terminated %v", err, terminated)
	}

	// The Linux hosts' reaper counts the Linux pool's build only, and idles out its own hosts
	// only while none of them waits.
	linuxMetrics := &fakeMetrics{}
	linuxHosts := &fakeHosts{instances: []Instance{{ID: "i-linux-idle", State: StateInService}}}
	see("i-linux-idle", now.Add(-2*DefaultIdleLimit))
	lr := &Reaper{Store: st, Pool: kiln.HostedPoolLinux, Hosts: linuxHosts, Metrics: linuxMetrics, Now: func() time.Time { return clock },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := lr.Tick(ctx); err != nil || !slices.Equal(linuxMetrics.values, []int{1}) || len(linuxHosts.terminated) != 0 {
		t.Fatalf("Linux tick with its build waiting: %v, published %v, terminated %v", err, linuxMetrics.values, linuxHosts.terminated)
	}
	linuxWaiting.Status, linuxWaiting.FinishedAt = kiln.StatusSuperseded, &now
	if err := st.UpdateBuild(ctx, linuxWaiting, kiln.StatusPending, kiln.AllBuildFields); err != nil {
		t.Fatal(err)
	}
	if err := lr.Tick(ctx); err != nil || linuxMetrics.values[1] != 0 || !slices.Equal(linuxHosts.terminated, []string{"i-linux-idle"}) {
		t.Fatalf("Linux tick with nothing waiting: %v, published %v, terminated %v", err, linuxMetrics.values, linuxHosts.terminated)
	}
	if err := (&Reaper{Store: st, Hosts: linuxHosts, Metrics: linuxMetrics}).Tick(ctx); err == nil {
		t.Fatal("a reaper without a pool ticked")
	}
}

// fakeHosts is a group whose terminations are recorded.
type fakeHosts struct {
	instances  []Instance
	terminated []string
}

func (h *fakeHosts) Instances(context.Context) ([]Instance, error) { return h.instances, nil }

func (h *fakeHosts) Terminate(_ context.Context, id string) error {
	h.terminated = append(h.terminated, id)
	return nil
}
