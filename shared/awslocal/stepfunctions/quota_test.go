package stepfunctions

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestABuildPastTheCodeBuildQuotaWaitsPending: with CodeBuild's quota at one build, a second
// build's StartBuild is refused (AccountLimitExceededException); it waits pending
// (WaitForCapacity), claims again and runs once the first ended: both complete, none fails for
// the quota.
func TestABuildPastTheCodeBuildQuotaWaitsPending(t *testing.T) {
	w := newWorld(t, worldOptions{quota: 1, heartbeat: time.Second})
	s := w.setting(t, kiln.PlatformLinux, "5.3", 0)
	first := w.trigger(t, s, hostBeatLong) // heartbeats for 3 s, then completes
	w.waitFor(t, first.ID, "running", func(b *kiln.Build) bool { return b.Status == kiln.StatusRunning })
	other := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: w.org, ProjectID: w.project.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeDevelopment, Branch: "main", UEVersion: "5.3", UprojectPath: "Game.uproject", Trigger: kiln.TriggerManual,
		CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()} // another build type: it does not supersede the first
	if err := w.st.CreateBuildSetting(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	second := w.trigger(t, other, hostComplete)
	for deadline := time.Now().Add(30 * time.Second); w.hosts.Refused() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("CodeBuild never refused the second build")
		}
	}
	if b := w.waitFor(t, second.ID, "read", func(*kiln.Build) bool { return true }); b.Status != kiln.StatusPending || b.StartedAt != nil {
		t.Errorf("refused for the quota, the build is %s (startedAt %v), want pending", b.Status, b.StartedAt)
	}
	for _, b := range []*kiln.Build{first, second} {
		got := w.waitFor(t, b.ID, "its end", func(b *kiln.Build) bool { return b.Status.Terminal() })
		if got.Status != kiln.StatusComplete {
			t.Errorf("build %s: %s (%q), want complete", b.ID, got.Status, got.FailureReason)
		}
		if status := w.execution(t, b.ID); status != "SUCCEEDED" {
			t.Errorf("build %s: execution %s", b.ID, status)
		}
	}
}
