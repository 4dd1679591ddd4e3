package builds

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestHostsHoldTheirBuilds: a build records the host that claimed it; that host may claim it
// again and keep it alive, another host may do neither.
func TestHostsHoldTheirBuilds(t *testing.T) {
	ctx := context.Background()
	claim := func(host string) func(w *lifecycleWorld, b *kiln.Build) error {
		return func(w *lifecycleWorld, b *kiln.Build) error { _, err := w.lc.Claim(ctx, w.org, b.ID, host); return err }
	}
	heartbeat := func(host string) func(w *lifecycleWorld, b *kiln.Build) error {
		return func(w *lifecycleWorld, b *kiln.Build) error { return w.lc.Heartbeat(ctx, w.org, b.ID, host) }
	}
	tests := []struct {
		name string
		// then is called on a build holder claimed (pending → running) a minute earlier.
		then     func(w *lifecycleWorld, b *kiln.Build) error
		wantCode string // "" for nil
		// beat: the call recorded a heartbeat (at the later time); otherwise the build is as
		// the claim left it.
		beat bool
	}{
		{name: "the holder claims again", then: claim(holder)},
		{name: "a rival claims", then: claim("host-b"), wantCode: kiln.EInvalidState},
		{name: "a claim naming no host", then: claim(""), wantCode: kiln.EValidation},
		{name: "the holder reports", then: heartbeat(holder), beat: true},
		{name: "a rival reports", then: heartbeat("host-b"), wantCode: kiln.EInvalidState},
		{name: "a report naming no host", then: heartbeat(""), wantCode: kiln.EInvalidState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLifecycleWorld(t)
			b := w.build(t, kiln.StatusPending)
			claimed, err := w.lc.Claim(ctx, w.org, b.ID, holder)
			if err != nil {
				t.Fatal(err)
			}
			if claimed.Host != holder {
				t.Fatalf("claim answered host %q, want %q", claimed.Host, holder)
			}
			stored := w.status(t, b.ID)
			if stored.Status != kiln.StatusRunning || stored.Host != holder {
				t.Fatalf("after the claim: %s on %q, want running on %q", stored.Status, stored.Host, holder)
			}
			w.now = w.now.Add(time.Minute)
			err = tt.then(w, b)
			if got := kiln.ErrorCode(err); err != nil && got != tt.wantCode || err == nil && tt.wantCode != "" {
				t.Fatalf("got %v, want code %q", err, tt.wantCode)
			}
			want := stored
			if tt.beat {
				at := w.now
				want.HeartbeatAt = &at
			}
			if got := w.status(t, b.ID); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("stored %+v, want %+v", got, want)
			}
			if ev := w.events.of(b.ID); len(ev) != 1 || ev[0] != "pending→running" {
				t.Fatalf("events %v, want only the claim's pending→running", ev)
			}
		})
	}
}

// TestRivalReportsDoNotKeepABuildAlive: a lost host that keeps reporting on a build another host
// holds does not spare it from the watchdog once the holder fell silent.
func TestRivalReportsDoNotKeepABuildAlive(t *testing.T) {
	ctx := context.Background()
	w := newLifecycleWorld(t)
	b := w.build(t, kiln.StatusRunning)
	for range 10 {
		w.now = w.now.Add(5 * time.Second)
		if err := w.lc.Heartbeat(ctx, w.org, b.ID, "host-lost"); !kiln.IsCode(err, kiln.EInvalidState) {
			t.Fatalf("a rival's heartbeat: %v, want invalid_state", err)
		}
	}
	failed, err := w.lc.FailSilent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].ID != b.ID || failed[0].FailureReason != ReasonSilentHost {
		t.Fatalf("FailSilent failed %+v, want %s as silent", failed, b.ID)
	}
}
