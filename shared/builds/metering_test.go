package builds

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func (w *lifecycleWorld) usage(t *testing.T, month string) map[kiln.Platform]int64 {
	t.Helper()
	u, err := w.st.GetUsage(context.Background(), w.org, month)
	if err != nil {
		t.Fatal(err)
	}
	return u.Minutes
}

// TestLifecycleMetersBuildMinutes: every way a build ends records its build minutes, from its
// claim to its end (queue time not counted), rounded up, in the UTC month it ended; a repeated
// end (a retried Lambda) counts nothing more; a build that never ran counts nothing.
func TestLifecycleMetersBuildMinutes(t *testing.T) {
	ctx := context.Background()
	queued := time.Date(2026, 1, 31, 22, 0, 0, 0, time.UTC) // an hour and more in the queue
	claimed := time.Date(2026, 1, 31, 23, 59, 10, 0, time.UTC)
	tests := []struct {
		name   string
		claim  bool
		ran    time.Duration
		end    func(w *lifecycleWorld, b *kiln.Build) error
		month  string
		want   int64
		silent string // the month that must stay empty
	}{
		{"complete within the month", true, 45 * time.Second, func(w *lifecycleWorld, b *kiln.Build) error { _, err := w.lc.Complete(ctx, w.artifact(b)); return err }, "2026-01", 1, "2026-02"},
		{"complete across midnight: the month it ended", true, 3*time.Minute + time.Second, func(w *lifecycleWorld, b *kiln.Build) error { _, err := w.lc.Complete(ctx, w.artifact(b)); return err }, "2026-02", 4, "2026-01"},
		{"failed", true, 2 * time.Minute, func(w *lifecycleWorld, b *kiln.Build) error {
			_, err := w.lc.Fail(ctx, w.org, b.ID, "RunUAT failed")
			return err
		}, "2026-02", 2, "2026-01"},
		{"cancelled while running", true, 10 * time.Second, func(w *lifecycleWorld, b *kiln.Build) error { _, _, err := w.lc.Cancel(ctx, w.org, b.ID); return err }, "2026-01", 1, "2026-02"},
		{"superseded while running", true, 70 * time.Second, func(w *lifecycleWorld, b *kiln.Build) error {
			_, _, err := w.lc.Supersede(ctx, w.org, b.ID)
			return err
		}, "2026-02", 2, "2026-01"},
		{"cancelled while pending: never ran", false, time.Hour, func(w *lifecycleWorld, b *kiln.Build) error { _, _, err := w.lc.Cancel(ctx, w.org, b.ID); return err }, "2026-02", 0, "2026-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLifecycleWorld(t)
			w.now = queued
			b := w.build(t, kiln.StatusPending)
			if tt.claim {
				w.now = claimed
				if _, err := w.lc.Claim(ctx, w.org, b.ID, holder); err != nil {
					t.Fatal(err)
				}
			}
			w.now = claimed.Add(tt.ran)
			for range 2 { // the end, then the same end again
				_ = tt.end(w, b)
			}
			got := w.status(t, b.ID)
			if !got.Status.Terminal() || got.BuildMinutes != tt.want {
				t.Fatalf("build %s with %d minutes, want ended with %d", got.Status, got.BuildMinutes, tt.want)
			}
			want := map[kiln.Platform]int64{}
			if tt.want > 0 {
				want[kiln.PlatformLinux] = tt.want
			}
			if u := w.usage(t, tt.month); len(u) != len(want) || u[kiln.PlatformLinux] != want[kiln.PlatformLinux] {
				t.Errorf("usage of %s: %v, want %v", tt.month, u, want)
			}
			if u := w.usage(t, tt.silent); len(u) != 0 {
				t.Errorf("usage of %s: %v, want none", tt.silent, u)
			}
		})
	}
}

// failingEnds is the store with UpdateBuild failing the writes that end a build while fail is
// set, as a crash or a lost connection in the middle of the end would.
type failingEnds struct {
	store.Builds
	fail bool
}

func (f *failingEnds) UpdateBuild(ctx context.Context, b *kiln.Build, expected kiln.BuildStatus, fields kiln.BuildFields) error {
	if f.fail && b.Status.Terminal() && !expected.Terminal() {
		return errors.New("connection reset")
	}
	return f.Builds.UpdateBuild(ctx, b, expected, fields)
}

// TestMeteringSurvivesAFailedEnd: the end of a build whose write fails is neither written nor
// counted; the retry (the runner's, or a retried Lambda) ends it and counts it once.
func TestMeteringSurvivesAFailedEnd(t *testing.T) {
	ctx := context.Background()
	w := newLifecycleWorld(t)
	b := w.build(t, kiln.StatusPending)
	if _, err := w.lc.Claim(ctx, w.org, b.ID, holder); err != nil {
		t.Fatal(err)
	}
	f := &failingEnds{Builds: w.st, fail: true}
	w.lc.Builds = f
	w.now = w.now.Add(5*time.Minute + time.Millisecond)
	if _, err := w.lc.Complete(ctx, w.artifact(b)); err == nil {
		t.Fatal("Complete succeeded although its write failed")
	}
	month := kiln.UsageMonth(w.now)
	if got := w.status(t, b.ID); got.Status != kiln.StatusRunning || len(w.usage(t, month)) != 0 {
		t.Fatalf("after the failed end: %s, usage %v; want running, nothing counted", got.Status, w.usage(t, month))
	}
	f.fail = false
	for range 2 {
		if _, err := w.lc.Complete(ctx, w.artifact(b)); err != nil {
			t.Fatal(err)
		}
	}
	if u := w.usage(t, month); u[kiln.PlatformLinux] != 6 || len(u) != 1 {
		t.Fatalf("usage: %v, want Linux 6", u)
	}
}
