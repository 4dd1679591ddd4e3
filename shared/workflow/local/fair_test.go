package local

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// gateRunner reports each build it starts and runs it until the test releases it (it then
// completes) or it is stopped.
type gateRunner struct {
	st      *sqlitestore.Store
	started chan *kiln.Build
	release map[string]chan struct{}
}

func newGateRunner(st *sqlitestore.Store, bs ...*kiln.Build) *gateRunner {
	g := &gateRunner{st: st, started: make(chan *kiln.Build, len(bs)), release: map[string]chan struct{}{}}
	for _, b := range bs {
		g.release[b.ID] = make(chan struct{})
	}
	return g
}

func (g *gateRunner) Run(ctx context.Context, b *kiln.Build) error {
	g.started <- b
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-g.release[b.ID]:
	}
	if err := b.Transition(kiln.StatusComplete, time.Now(), ""); err != nil {
		return err
	}
	return g.st.UpdateBuild(context.WithoutCancel(ctx), b, kiln.StatusRunning, kiln.AllBuildFields)
}

// next waits for the next build to start.
func (g *gateRunner) next(t *testing.T) *kiln.Build {
	t.Helper()
	select {
	case b := <-g.started:
		return b
	case <-time.After(10 * time.Second):
		t.Fatal("no build started")
		return nil
	}
}

// queueBuilds makes n pending builds of org, one millisecond apart from at on.
func queueBuilds(t *testing.T, st *sqlitestore.Store, org string, n int, at time.Time) []*kiln.Build {
	out := make([]*kiln.Build, n)
	for i := range out {
		out[i] = newBuild(t, st, org, kiln.StatusPending, at.Add(time.Duration(i)*time.Millisecond))
	}
	return out
}

func startWorkflow(t *testing.T, w *Workflow) {
	t.Helper()
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Shutdown(context.Background()) })
}

func TestBacklogOfOneOrganizationDoesNotHoldBackAnother(t *testing.T) {
	st := openStore(t)
	now := time.Now().Add(-time.Hour)
	a := queueBuilds(t, st, kiln.NewID(), 10, now)
	b := queueBuilds(t, st, kiln.NewID(), 1, now.Add(time.Minute))
	g := newGateRunner(st, append(a, b...)...)
	startWorkflow(t, New(st, &builds.Lifecycle{Builds: st, Projects: st}, g, 2, nil))

	// Both workers are taken by the first two builds, and b's is one of them.
	first, second := g.next(t), g.next(t)
	if got := map[string]bool{first.ID: true, second.ID: true}; !got[a[0].ID] || !got[b[0].ID] {
		t.Fatalf("first builds %s and %s, want a's oldest %s and b's %s", first.ID, second.ID, a[0].ID, b[0].ID)
	}
	// The rest of a's backlog follows in order as workers free up.
	for i := 1; i < len(a); i++ {
		close(g.release[a[i-1].ID])
		if got := g.next(t); got.ID != a[i].ID {
			t.Fatalf("build %d of a: %s started, want %s", i, got.ID, a[i].ID)
		}
	}
}

func TestOrganizationAtItsLimitWaitsWhileOthersRun(t *testing.T) {
	st := openStore(t)
	now := time.Now().Add(-time.Hour)
	a := queueBuilds(t, st, kiln.NewID(), 3, now)
	b := queueBuilds(t, st, kiln.NewID(), 2, now.Add(time.Minute))
	g := newGateRunner(st, append(a, b...)...)
	w := New(st, &builds.Lifecycle{Builds: st, Projects: st}, g, 2, nil)
	w.OrgLimit = func(string) int { return 1 }
	startWorkflow(t, w)

	g.next(t)
	g.next(t) // a's first and b's first
	close(g.release[b[0].ID])
	// A worker is free and a's second is the oldest pending build, but a is at its limit of one.
	if got := g.next(t); got.ID != b[1].ID {
		t.Fatalf("%s started, want b's second %s while a is at its limit", got.ID, b[1].ID)
	}
	if got, err := st.GetBuild(context.Background(), a[1].OrganizationID, a[1].ID); err != nil || got.Status != kiln.StatusPending {
		t.Fatalf("a's second build: %v %v, want pending", got, err)
	}
	close(g.release[a[0].ID])
	if got := g.next(t); got.ID != a[1].ID {
		t.Fatalf("%s started, want a's second %s once a's first ended", got.ID, a[1].ID)
	}
}
