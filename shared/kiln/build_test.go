package kiln

import (
	"testing"
	"time"
)

func TestBuildTransitions(t *testing.T) {
	all := BuildStatuses
	allowed := map[[2]BuildStatus]bool{
		{StatusPending, StatusRunning}:    true,
		{StatusPending, StatusFailed}:     true,
		{StatusPending, StatusSuperseded}: true,
		{StatusRunning, StatusComplete}:   true,
		{StatusRunning, StatusFailed}:     true,
		{StatusRunning, StatusSuperseded}: true,
	}
	for _, from := range all {
		for _, to := range all {
			want := allowed[[2]BuildStatus{from, to}]
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
			if from.Terminal() && CanTransition(from, to) {
				t.Errorf("terminal %s may become %s", from, to)
			}
		}
	}
}

func TestTransitionSetsTimesAndReason(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	b := &Build{ID: "b", Status: StatusPending, CreatedAt: t0}
	if err := b.Transition(StatusRunning, t0.Add(time.Minute), ""); err != nil {
		t.Fatal(err)
	}
	if err := b.Transition(StatusFailed, t0.Add(3*time.Minute), "cancelled"); err != nil {
		t.Fatal(err)
	}
	if b.DurationMs() == nil || *b.DurationMs() != 120000 {
		t.Fatalf("duration %v, want 120000 (queue time excluded)", b.DurationMs())
	}
	if b.FailureReason != "cancelled" || b.FinishedAt == nil {
		t.Fatalf("failed build: %+v", b)
	}
	err := b.Transition(StatusRunning, t0.Add(4*time.Minute), "")
	if !IsCode(err, EInvalidState) || b.Status != StatusFailed {
		t.Fatalf("a terminal build moved: %v, status %s", err, b.Status)
	}
}

func TestAutoDeployDoesNotApplyToBuildsThatDidNotComplete(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		path   []BuildStatus
		reason string
		want   AutoDeployStatus
	}{
		{"failed while running", []BuildStatus{StatusRunning, StatusFailed}, "RunUAT exited with status 1", AutoDeployNone},
		{"cancelled while pending", []BuildStatus{StatusFailed}, "cancelled", AutoDeployNone},
		{"superseded while running", []BuildStatus{StatusRunning, StatusSuperseded}, "", AutoDeployNone},
		{"superseded while pending", []BuildStatus{StatusSuperseded}, "", AutoDeployNone},
		{"complete", []BuildStatus{StatusRunning, StatusComplete}, "", AutoDeployPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Build{ID: "b", Status: StatusPending, CreatedAt: t0, AutoDeployStatus: AutoDeployPending}
			for _, to := range tt.path {
				if err := b.Transition(to, t0.Add(time.Minute), tt.reason); err != nil {
					t.Fatal(err)
				}
			}
			if b.AutoDeployStatus != tt.want || b.DeployStatus() != tt.want {
				t.Errorf("autoDeployStatus = %q (shown %q), want %q", b.AutoDeployStatus, b.DeployStatus(), tt.want)
			}
		})
	}
}

func TestDeployStatusHidesPendingOfBuildsStoredBeforeTheRule(t *testing.T) {
	for _, st := range []BuildStatus{StatusFailed, StatusSuperseded} {
		b := &Build{Status: st, AutoDeployStatus: AutoDeployPending}
		if got := b.DeployStatus(); got != AutoDeployNone {
			t.Errorf("%s build stored with pending shows %q, want none", st, got)
		}
	}
	for _, st := range []BuildStatus{StatusPending, StatusRunning, StatusComplete} {
		b := &Build{Status: st, AutoDeployStatus: AutoDeployPending}
		if got := b.DeployStatus(); got != AutoDeployPending {
			t.Errorf("%s build shows %q, want pending", st, got)
		}
	}
}
