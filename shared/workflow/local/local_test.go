package local

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// fakeRunner completes builds, or blocks until stopped.
type fakeRunner struct {
	mu      sync.Mutex
	order   []string
	stopped []string // blocked builds, once stopped
	block   bool
	st      interface {
		UpdateBuild(context.Context, *kiln.Build, kiln.BuildStatus, kiln.BuildFields) error
	}
}

func (f *fakeRunner) Run(ctx context.Context, b *kiln.Build) error {
	f.mu.Lock()
	f.order = append(f.order, b.ID)
	block := f.block
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		f.mu.Lock()
		f.stopped = append(f.stopped, b.ID)
		f.mu.Unlock()
		return ctx.Err()
	}
	if err := b.Transition(kiln.StatusComplete, time.Now(), ""); err != nil {
		return err
	}
	return f.st.UpdateBuild(ctx, b, kiln.StatusRunning, kiln.AllBuildFields)
}

func newBuild(t *testing.T, st *sqlitestore.Store, org string, status kiln.BuildStatus, at time.Time) *kiln.Build {
	t.Helper()
	var gen kiln.IDGenerator
	b := &kiln.Build{ID: gen.New(at), OrganizationID: org, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
		Status: status, Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.3",
		TriggeredBy: "cron", CreatedAt: at.UTC().Truncate(time.Millisecond)}
	if status == kiln.StatusRunning {
		started := b.CreatedAt
		b.StartedAt, b.HeartbeatAt = &started, &started
	}
	if err := st.CreateBuild(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

func openStore(t *testing.T) *sqlitestore.Store {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func waitStatus(t *testing.T, st *sqlitestore.Store, b *kiln.Build, want kiln.BuildStatus) *kiln.Build {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := st.GetBuild(context.Background(), b.OrganizationID, b.ID)
		if err == nil && got.Status == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s is %v, want %s", b.ID, got.Status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestQueueRunsOldestFirstAndRecoversInterruptedBuilds(t *testing.T) {
	st := openStore(t)
	org := kiln.NewID()
	now := time.Now()
	left := newBuild(t, st, org, kiln.StatusRunning, now.Add(-time.Hour)) // a crash left it running
	second := newBuild(t, st, org, kiln.StatusPending, now.Add(-time.Minute))
	first := newBuild(t, st, kiln.NewID(), kiln.StatusPending, now.Add(-2*time.Minute))
	r := &fakeRunner{st: st}
	w := New(st, &builds.Lifecycle{Builds: st, Projects: st}, r, 1, nil)
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown(context.Background())
	got := waitStatus(t, st, left, kiln.StatusFailed)
	if got.FailureReason == "" || got.FinishedAt == nil {
		t.Fatalf("interrupted build: %+v", got)
	}
	waitStatus(t, st, first, kiln.StatusComplete)
	waitStatus(t, st, second, kiln.StatusComplete)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.order) != 2 || r.order[0] != first.ID || r.order[1] != second.ID {
		t.Fatalf("run order %v, want oldest first", r.order)
	}
}

func TestSilentHostFailsItsBuildAndStopStopsIt(t *testing.T) {
	defer func(w time.Duration) { watchEvery = w }(watchEvery)
	watchEvery = 50 * time.Millisecond
	st := openStore(t)
	r := &fakeRunner{st: st, block: true}
	w := New(st, &builds.Lifecycle{Builds: st, Projects: st}, r, 1, nil)
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown(context.Background())
	// A build running on another host that went silent 40 s ago.
	silent := newBuild(t, st, kiln.NewID(), kiln.StatusPending, time.Now())
	claimed := waitStatus(t, st, silent, kiln.StatusRunning)
	old := time.Now().Add(-40 * time.Second).UTC().Truncate(time.Millisecond)
	claimed.HeartbeatAt = &old
	// The local heartbeat refreshes every 5 s, so the watchdog sees the stale one first.
	if err := st.UpdateBuild(context.Background(), claimed, kiln.StatusRunning, kiln.AllBuildFields); err != nil {
		t.Fatal(err)
	}
	got := waitStatus(t, st, silent, kiln.StatusFailed)
	if got.FailureReason != "the build host stopped reporting for 30 seconds" {
		t.Fatalf("reason %q", got.FailureReason)
	}
	// Its runner was stopped: a new build can take the only worker.
	next := newBuild(t, st, kiln.NewID(), kiln.StatusPending, time.Now())
	w.Start(context.Background(), next)
	waitStatus(t, st, next, kiln.StatusRunning)
}
