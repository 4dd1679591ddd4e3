package builds

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// TestRacesHaveOneWinner: two changes of the same build at once: exactly one is written, the
// other is invalid_state, and the events hear of the winner only.
func TestRacesHaveOneWinner(t *testing.T) {
	ctx := context.Background()
	type op func(w *lifecycleWorld, b *kiln.Build) error
	complete := func(w *lifecycleWorld, b *kiln.Build) error { _, err := w.lc.Complete(ctx, w.artifact(b)); return err }
	cancel := func(w *lifecycleWorld, b *kiln.Build) error { _, _, err := w.lc.Cancel(ctx, w.org, b.ID); return err }
	supersede := func(w *lifecycleWorld, b *kiln.Build) error {
		_, _, err := w.lc.Supersede(ctx, w.org, b.ID)
		return err
	}
	fail := func(w *lifecycleWorld, b *kiln.Build) error {
		_, err := w.lc.Fail(ctx, w.org, b.ID, "boom")
		return err
	}
	claim := func(host string) op {
		return func(w *lifecycleWorld, b *kiln.Build) error { _, err := w.lc.Claim(ctx, w.org, b.ID, host); return err }
	}
	tests := []struct {
		name string
		from kiln.BuildStatus
		a, b op
	}{
		{"complete vs cancel", kiln.StatusRunning, complete, cancel},
		{"complete vs supersede", kiln.StatusRunning, complete, supersede},
		{"fail vs cancel", kiln.StatusRunning, fail, cancel},
		{"claim vs claim", kiln.StatusPending, claim("host-a"), claim("host-b")},
		{"cancel vs supersede", kiln.StatusPending, cancel, supersede},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLifecycleWorld(t)
			for range 20 {
				b := w.build(t, tt.from)
				errs := make([]error, 2)
				var wg sync.WaitGroup
				for i, f := range []op{tt.a, tt.b} {
					wg.Go(func() { errs[i] = f(w, b) })
				}
				wg.Wait()
				won := 0
				for _, err := range errs {
					if err == nil {
						won++
					} else if !kiln.IsCode(err, kiln.EInvalidState) {
						t.Fatalf("the loser: %v, want invalid_state", err)
					}
				}
				if won != 1 {
					t.Fatalf("%d winners (%v)", won, errs)
				}
				got := w.status(t, b.ID)
				if ev := w.events.of(b.ID); len(ev) != 1 || ev[0] != fmt.Sprintf("%s→%s", tt.from, got.Status) {
					t.Fatalf("events %v for a build now %s", ev, got.Status)
				}
				if _, err := w.st.GetArtifact(ctx, w.org, b.ID); (err == nil) != (got.Status == kiln.StatusComplete) {
					t.Fatalf("a %s build's artifact record: %v", got.Status, err)
				}
			}
		})
	}
}

// pausingBuilds pauses the first GetBuild after it read, until proceed is closed.
type pausingBuilds struct {
	*sqlitestore.Store
	once          sync.Once
	read, proceed chan struct{}
}

func (p *pausingBuilds) GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error) {
	b, err := p.Store.GetBuild(ctx, orgID, id)
	first := false
	p.once.Do(func() { first = true })
	if first {
		close(p.read)
		<-p.proceed
	}
	return b, err
}

// TestHeartbeatsDoNotUndoProgress: a heartbeat that read the build before the commit was
// recorded does not write the build back without it (both writes keep the status, so the
// status condition alone cannot order them).
func TestHeartbeatsDoNotUndoProgress(t *testing.T) {
	ctx := context.Background()
	w := newLifecycleWorld(t)
	b := w.build(t, kiln.StatusRunning)
	pausing := &pausingBuilds{Store: w.st, read: make(chan struct{}), proceed: make(chan struct{})}
	w.lc.Builds = pausing
	heartbeat := make(chan error, 1)
	go func() { heartbeat <- w.lc.Heartbeat(ctx, w.org, b.ID, holder) }()
	<-pausing.read // the heartbeat has read the build
	progress := make(chan error, 1)
	go func() {
		_, err := w.lc.Progress(ctx, w.org, b.ID, func(b *kiln.Build) { b.Commit = "abc1234" })
		progress <- err
	}()
	// Let the commit be written first if nothing holds it back (the old behaviour); a lifecycle
	// that orders the two holds it until the heartbeat is written.
	var progressErr error
	progressDone := false
	select {
	case progressErr = <-progress:
		progressDone = true
	case <-time.After(200 * time.Millisecond):
	}
	close(pausing.proceed)
	if err := <-heartbeat; err != nil {
		t.Fatal(err)
	}
	if !progressDone {
		progressErr = <-progress
	}
	if progressErr != nil {
		t.Fatal(progressErr)
	}
	got := w.status(t, b.ID)
	if got.Commit != "abc1234" || got.HeartbeatAt == nil {
		t.Fatalf("commit %q heartbeat %v: one write undid the other", got.Commit, got.HeartbeatAt)
	}
}
