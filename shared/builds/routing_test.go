package builds

import (
	"context"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestWritesThatKeepTheStatus: the pool assignment, the task token and a redeploy's reset go
// through the lifecycle: each writes its fields in the statuses it allows, repeats answer as the
// first call did, a build in another status is invalid_state with the build as read, and none
// of them is a change of status anyone hears of.
func TestWritesThatKeepTheStatus(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		status kiln.BuildStatus
		write  func(w *lifecycleWorld, id string) (*kiln.Build, error)
		check  func(b *kiln.Build) bool
		ok     bool
	}{
		{"pool of a pending build", kiln.StatusPending, func(w *lifecycleWorld, id string) (*kiln.Build, error) {
			return w.lc.AssignPool(ctx, w.org, id, kiln.HostedPoolWin64)
		}, func(b *kiln.Build) bool { return b.AgentPool == kiln.HostedPoolWin64 }, true},
		{"pool of a superseded build", kiln.StatusSuperseded, func(w *lifecycleWorld, id string) (*kiln.Build, error) {
			return w.lc.AssignPool(ctx, w.org, id, kiln.HostedPoolWin64)
		}, func(b *kiln.Build) bool { return b.AgentPool == "" }, false},
		{"token of a pending build", kiln.StatusPending, func(w *lifecycleWorld, id string) (*kiln.Build, error) {
			return w.lc.StoreTaskToken(ctx, w.org, id, "token-1")
		}, func(b *kiln.Build) bool { return b.TaskToken == "token-1" }, true},
		{"token of a running build", kiln.StatusRunning, func(w *lifecycleWorld, id string) (*kiln.Build, error) {
			return w.lc.StoreTaskToken(ctx, w.org, id, "token-1")
		}, func(b *kiln.Build) bool { return b.TaskToken == "token-1" && b.Host == holder }, true},
		{"token of a failed build", kiln.StatusFailed, func(w *lifecycleWorld, id string) (*kiln.Build, error) {
			return w.lc.StoreTaskToken(ctx, w.org, id, "token-1")
		}, func(b *kiln.Build) bool { return b.TaskToken == "" }, false},
		{"reset of a complete build", kiln.StatusComplete, func(w *lifecycleWorld, id string) (*kiln.Build, error) {
			return w.lc.ResetDelivery(ctx, w.org, id)
		}, func(b *kiln.Build) bool {
			return b.AutoDeployStatus == kiln.AutoDeployPending && b.AutoDeployAttempts == 0 && b.AutoDeployError == ""
		}, true},
		{"reset of a running build", kiln.StatusRunning, func(w *lifecycleWorld, id string) (*kiln.Build, error) {
			return w.lc.ResetDelivery(ctx, w.org, id)
		}, func(b *kiln.Build) bool { return b.AutoDeployStatus == kiln.AutoDeployFailed }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLifecycleWorld(t)
			b := w.build(t, tt.status)
			b.AutoDeployStatus, b.AutoDeployAttempts, b.AutoDeployError = kiln.AutoDeployFailed, 5, "receiver answered 500"
			if err := w.st.UpdateBuild(ctx, b, tt.status, kiln.FieldAutoDeployStatus|kiln.FieldAutoDeployAttempts|kiln.FieldAutoDeployError); err != nil {
				t.Fatal(err)
			}
			for attempt := range 2 { // the second call is a repeat (a retried task)
				got, err := tt.write(w, b.ID)
				if tt.ok && err != nil || !tt.ok && (kiln.ErrorCode(err) != kiln.EInvalidState || got == nil || got.Status != tt.status) {
					t.Fatalf("call %d: %v, %v (ok %v)", attempt+1, got, err, tt.ok)
				}
			}
			stored := w.status(t, b.ID)
			if stored.Status != tt.status || !tt.check(stored) {
				t.Fatalf("stored build: %+v", stored)
			}
			if changes := w.events.of(b.ID); len(changes) != 0 {
				t.Fatalf("events heard %v, want none", changes)
			}
		})
	}
}
