package builds

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// recorder is Events that remembers every change it is told of.
type recorder struct {
	mu      sync.Mutex
	changes []string // "<build id> <from>→<to>"
}

func (r *recorder) BuildChanged(ctx context.Context, from kiln.BuildStatus, b *kiln.Build) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, fmt.Sprintf("%s %s→%s", b.ID, from, b.Status))
}

func (r *recorder) of(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.changes {
		if c[:len(id)] == id {
			out = append(out, c[len(id)+1:])
		}
	}
	return out
}

type lifecycleWorld struct {
	st     *sqlitestore.Store
	lc     *Lifecycle
	events *recorder
	org    string
	now    time.Time
}

func newLifecycleWorld(t *testing.T) *lifecycleWorld {
	t.Helper()
	st := storefixture.SQLite(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	w := &lifecycleWorld{st: st, events: &recorder{}, org: kiln.NewID(), now: now}
	w.lc = &Lifecycle{Builds: st, Projects: st, Artifacts: st, Events: w.events, Now: func() time.Time { return w.now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return w
}

// holder is the host that holds the running builds w.build stores.
const holder = "host-a"

// build stores a build in a status (running ones claimed by holder, started, with a heartbeat,
// at w.now).
func (w *lifecycleWorld) build(t *testing.T, status kiln.BuildStatus) *kiln.Build {
	t.Helper()
	return storefixture.Build(t, w.st, w.org, status, w.now, func(b *kiln.Build) {
		if b.Status == kiln.StatusRunning {
			b.Host = holder
		}
	})
}

func (w *lifecycleWorld) artifact(b *kiln.Build) *kiln.Artifact {
	return &kiln.Artifact{BuildID: b.ID, OrganizationID: b.OrganizationID, ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID,
		Platform: b.Platform, BuildType: b.BuildType, UEVersion: b.UEVersion, Branch: b.Branch, Key: b.OrganizationID + "/" + b.ID + ".tar.gz",
		SizeBytes: 1, ChecksumMD5: "d41d8cd98f00b204e9800998ecf8427e", CreatedAt: w.now}
}

func (w *lifecycleWorld) status(t *testing.T, id string) *kiln.Build {
	t.Helper()
	b, err := w.st.GetBuild(context.Background(), w.org, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEveryChangeTwice: each change made twice (a retried Lambda, a redelivered task) is one
// change: the second call writes nothing, tells nobody, and answers as the table says.
func TestEveryChangeTwice(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name         string
		from         kiln.BuildStatus
		silent       bool // the host stopped reporting before the calls
		call         func(w *lifecycleWorld, b *kiln.Build) error
		want         kiln.BuildStatus
		reason       string
		secondIsFine bool // the second call answers nil (otherwise invalid_state)
	}{
		{name: "claim", from: kiln.StatusPending, want: kiln.StatusRunning, secondIsFine: true,
			call: func(w *lifecycleWorld, b *kiln.Build) error {
				_, err := w.lc.Claim(ctx, w.org, b.ID, holder)
				return err
			}},
		{name: "complete", from: kiln.StatusRunning, want: kiln.StatusComplete, secondIsFine: true,
			call: func(w *lifecycleWorld, b *kiln.Build) error { _, err := w.lc.Complete(ctx, w.artifact(b)); return err }},
		{name: "fail", from: kiln.StatusRunning, want: kiln.StatusFailed, reason: "RunUAT failed", secondIsFine: true,
			call: func(w *lifecycleWorld, b *kiln.Build) error {
				_, err := w.lc.Fail(ctx, w.org, b.ID, "RunUAT failed")
				return err
			}},
		{name: "fail pending (could not start)", from: kiln.StatusPending, want: kiln.StatusFailed, reason: "could not start: x", secondIsFine: true,
			call: func(w *lifecycleWorld, b *kiln.Build) error {
				_, err := w.lc.Fail(ctx, w.org, b.ID, "could not start: x")
				return err
			}},
		{name: "cancel pending", from: kiln.StatusPending, want: kiln.StatusFailed, reason: ReasonCancelled,
			call: func(w *lifecycleWorld, b *kiln.Build) error { _, _, err := w.lc.Cancel(ctx, w.org, b.ID); return err }},
		{name: "cancel running", from: kiln.StatusRunning, want: kiln.StatusFailed, reason: ReasonCancelled,
			call: func(w *lifecycleWorld, b *kiln.Build) error { _, _, err := w.lc.Cancel(ctx, w.org, b.ID); return err }},
		{name: "supersede", from: kiln.StatusRunning, want: kiln.StatusSuperseded,
			call: func(w *lifecycleWorld, b *kiln.Build) error {
				_, _, err := w.lc.Supersede(ctx, w.org, b.ID)
				return err
			}},
		{name: "interrupted", from: kiln.StatusRunning, want: kiln.StatusFailed, reason: ReasonInterrupted,
			call: func(w *lifecycleWorld, b *kiln.Build) error { _, err := w.lc.Interrupted(ctx, w.org, b.ID); return err }},
		{name: "silent host", from: kiln.StatusRunning, silent: true, want: kiln.StatusFailed, reason: ReasonSilentHost,
			call: func(w *lifecycleWorld, b *kiln.Build) error { _, err := w.lc.Silent(ctx, w.org, b.ID); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLifecycleWorld(t)
			b := w.build(t, tt.from)
			if tt.silent {
				w.now = w.now.Add(kiln.HeartbeatTimeout + time.Second)
			}
			if err := tt.call(w, b); err != nil {
				t.Fatalf("first call: %v", err)
			}
			first := w.status(t, b.ID)
			w.now = w.now.Add(time.Minute) // a second call later would stamp a later time if it wrote
			err := tt.call(w, b)
			switch {
			case tt.secondIsFine && err != nil:
				t.Fatalf("second call: %v, want nil", err)
			case !tt.secondIsFine && !kiln.IsCode(err, kiln.EInvalidState):
				t.Fatalf("second call: %v, want invalid_state", err)
			}
			got := w.status(t, b.ID)
			if got.Status != tt.want || got.FailureReason != tt.reason {
				t.Fatalf("status %s %q, want %s %q", got.Status, got.FailureReason, tt.want, tt.reason)
			}
			if fmt.Sprint(got) != fmt.Sprint(first) {
				t.Fatalf("the second call wrote: %+v, then %+v", first, got)
			}
			if ev := w.events.of(b.ID); len(ev) != 1 || ev[0] != fmt.Sprintf("%s→%s", tt.from, tt.want) {
				t.Fatalf("events %v, want one %s→%s", ev, tt.from, tt.want)
			}
		})
	}
}

// TestEndedBuildsStayEnded: no change brings an ended build back or changes how it ended.
func TestEndedBuildsStayEnded(t *testing.T) {
	ctx := context.Background()
	w := newLifecycleWorld(t)
	for _, status := range []kiln.BuildStatus{kiln.StatusComplete, kiln.StatusFailed, kiln.StatusSuperseded} {
		b := w.build(t, kiln.StatusRunning)
		var err error
		switch status {
		case kiln.StatusComplete:
			_, err = w.lc.Complete(ctx, w.artifact(b))
		case kiln.StatusFailed:
			_, err = w.lc.Fail(ctx, w.org, b.ID, "boom")
		case kiln.StatusSuperseded:
			_, _, err = w.lc.Supersede(ctx, w.org, b.ID)
		}
		if err != nil {
			t.Fatal(err)
		}
		before := w.status(t, b.ID)
		w.now = w.now.Add(time.Hour)
		calls := map[string]func() error{
			"claim":     func() error { _, err := w.lc.Claim(ctx, w.org, b.ID, holder); return err },
			"heartbeat": func() error { return w.lc.Heartbeat(ctx, w.org, b.ID, holder) },
			"progress": func() error {
				_, err := w.lc.Progress(ctx, w.org, b.ID, func(b *kiln.Build) { b.Commit = "abc" })
				return err
			},
			"fail":        func() error { _, err := w.lc.Fail(ctx, w.org, b.ID, "other"); return err },
			"cancel":      func() error { _, _, err := w.lc.Cancel(ctx, w.org, b.ID); return err },
			"supersede":   func() error { _, _, err := w.lc.Supersede(ctx, w.org, b.ID); return err },
			"interrupted": func() error { _, err := w.lc.Interrupted(ctx, w.org, b.ID); return err },
			"silent":      func() error { _, err := w.lc.Silent(ctx, w.org, b.ID); return err },
		}
		if status != kiln.StatusComplete {
			calls["complete"] = func() error { _, err := w.lc.Complete(ctx, w.artifact(b)); return err }
		}
		for name, call := range calls {
			if err := call(); !kiln.IsCode(err, kiln.EInvalidState) {
				t.Errorf("%s of a %s build: %v, want invalid_state", name, status, err)
			}
		}
		if after := w.status(t, b.ID); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a %s build changed: %+v, then %+v", status, before, after)
		}
		if ev := w.events.of(b.ID); len(ev) != 1 {
			t.Errorf("a %s build: events %v, want only the one that ended it", status, ev)
		}
		if _, err := w.st.GetArtifact(ctx, w.org, b.ID); (err == nil) != (status == kiln.StatusComplete) {
			t.Errorf("a %s build: artifact record: %v", status, err)
		}
	}
}

// TestSilentSparesAHostThatReported: a heartbeat that lands before the watchdog's write keeps
// the build running; FailSilent fails only the silent ones.
func TestSilentSparesAHostThatReported(t *testing.T) {
	ctx := context.Background()
	w := newLifecycleWorld(t)
	alive, silent := w.build(t, kiln.StatusRunning), w.build(t, kiln.StatusRunning)
	w.now = w.now.Add(kiln.HeartbeatTimeout + time.Second)
	if err := w.lc.Heartbeat(ctx, w.org, alive.ID, holder); err != nil {
		t.Fatal(err)
	}
	if _, err := w.lc.Silent(ctx, w.org, alive.ID); !kiln.IsCode(err, kiln.EInvalidState) {
		t.Fatalf("silent of a build that just reported: %v", err)
	}
	failed, err := w.lc.FailSilent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].ID != silent.ID || failed[0].FailureReason != ReasonSilentHost {
		t.Fatalf("FailSilent failed %+v, want only %s", failed, silent.ID)
	}
	if got := w.status(t, alive.ID); got.Status != kiln.StatusRunning {
		t.Fatalf("the build that reported is %s", got.Status)
	}
}

// TestProgressKeepsStatusAndTellsNobody: recording the commit of a running build is no change
// of status.
func TestProgressKeepsStatusAndTellsNobody(t *testing.T) {
	ctx := context.Background()
	w := newLifecycleWorld(t)
	b := w.build(t, kiln.StatusRunning)
	if _, err := w.lc.Progress(ctx, w.org, b.ID, func(b *kiln.Build) { b.Commit, b.CommitMessage = "abc1234", "Fix" }); err != nil {
		t.Fatal(err)
	}
	if err := w.lc.Heartbeat(ctx, w.org, b.ID, holder); err != nil {
		t.Fatal(err)
	}
	got := w.status(t, b.ID)
	if got.Status != kiln.StatusRunning || got.Commit != "abc1234" || got.CommitMessage != "Fix" {
		t.Fatalf("got %+v", got)
	}
	if ev := w.events.of(b.ID); len(ev) != 0 {
		t.Fatalf("events %v", ev)
	}
}
