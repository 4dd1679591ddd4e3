package stepfunctions

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestABuildThatEndedBeforeItsClaimRunsNothing: a build cancelled before its execution claims it
// ends the execution at Done without a host, and stays cancelled; starting its execution again
// (a retried trigger) is no error.
func TestABuildThatEndedBeforeItsClaimRunsNothing(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOptions{})
	s := w.setting(t, kiln.PlatformLinux, "5.3", 0)
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: w.org, ProjectID: w.project.ID, BuildSettingID: s.ID, Status: kiln.StatusPending,
		Platform: s.Platform, BuildType: s.BuildType, Branch: "main", UEVersion: "5.3", TriggeredBy: "test", CreatedAt: time.Now().UTC()}
	if err := w.st.CreateBuild(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := w.service.Cancel(ctx, w.org, b.ID); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := w.workflow.Start(ctx, b); err != nil {
			t.Fatalf("start: %v", err)
		}
	}
	if got := w.execution(t, b.ID); got != "SUCCEEDED" {
		t.Errorf("execution ended %s, want SUCCEEDED", got)
	}
	if err := w.workflow.Start(ctx, b); err != nil {
		t.Fatalf("start after the execution ended: %v", err)
	}
	got, err := w.st.GetBuild(ctx, w.org, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != kiln.StatusFailed || got.FailureReason != "cancelled" || got.Host != "" {
		t.Errorf("build is %s (%q) on %q, want failed (cancelled) on no host", got.Status, got.FailureReason, got.Host)
	}
}
