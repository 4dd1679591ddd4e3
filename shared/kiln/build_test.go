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
