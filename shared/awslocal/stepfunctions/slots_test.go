package stepfunctions

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// slotsAfter answers that a build may run from its n-th claim on, counting the claims.
type slotsAfter struct {
	mu     sync.Mutex
	n      int
	claims map[string]int
}

func (s *slotsAfter) MayRun(_ context.Context, b *kiln.Build) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims[b.ID]++
	return s.claims[b.ID] >= s.n, nil
}

// TestABuildOverTheConcurrencyLimitWaitsPending: while the organization's plan has no free slot
// the claim answers wait, the execution waits (WaitForSlot) and claims again, the build stays
// pending meanwhile; once a slot frees it runs to the end.
func TestABuildOverTheConcurrencyLimitWaitsPending(t *testing.T) {
	slots := &slotsAfter{n: 3, claims: map[string]int{}}
	w := newWorld(t, worldOptions{slots: slots})
	b := w.trigger(t, w.setting(t, kiln.PlatformLinux, "5.3", 0), hostComplete)
	waiting := w.waitFor(t, b.ID, "its second claim", func(*kiln.Build) bool {
		slots.mu.Lock()
		defer slots.mu.Unlock()
		return slots.claims[b.ID] >= 2
	})
	if waiting.Status != kiln.StatusPending || waiting.Host != "" {
		t.Fatalf("while waiting for a slot the build is %s on %q, want pending on no host", waiting.Status, waiting.Host)
	}
	w.waitFor(t, b.ID, "complete", func(b *kiln.Build) bool { return b.Status == kiln.StatusComplete })
	if got := w.execution(t, b.ID); got != "SUCCEEDED" {
		t.Errorf("execution ended %s", got)
	}
	slots.mu.Lock()
	defer slots.mu.Unlock()
	if slots.claims[b.ID] != 3 {
		t.Errorf("claimed %d times, want 3 (two waits)", slots.claims[b.ID])
	}
}

// TestAHostedWindowsBuildTakesASlotFirst: a Win64 build for kiln's hosted Windows hosts checks its
// organization's slots before it enters the hosted pool, as a CodeBuild build does before its
// claim: over the limit it waits pending outside the pool, then enters it.
func TestAHostedWindowsBuildTakesASlotFirst(t *testing.T) {
	slots := &slotsAfter{n: 2, claims: map[string]int{}}
	w := newWorld(t, worldOptions{slots: slots, hosted: true})
	b := w.trigger(t, w.setting(t, kiln.PlatformWin64, "5.4", 0), hostComplete)
	stored := w.waitFor(t, b.ID, "its task token", func(b *kiln.Build) bool { return b.TaskToken != "" || b.Status.Terminal() })
	if stored.AgentPool != kiln.HostedPoolWin64 || stored.Status != kiln.StatusPending {
		t.Fatalf("build %s (%q) in pool %q, want pending in the hosted pool", stored.Status, stored.FailureReason, stored.AgentPool)
	}
	slots.mu.Lock()
	defer slots.mu.Unlock()
	if slots.claims[b.ID] != 2 {
		t.Errorf("slots checked %d times before the hosted pool, want 2 (one wait)", slots.claims[b.ID])
	}
}

// TestAnExecutionPastTheHistoryQuotaFails: the stand-in holds an execution to Step Functions'
// history quota (set low here): a build that waits for a slot longer than its history allows
// fails with States.Runtime, as AWS fails it, and the ended function fails the build.
func TestAnExecutionPastTheHistoryQuotaFails(t *testing.T) {
	slots := &slotsAfter{n: 1 << 30, claims: map[string]int{}}
	w := newWorld(t, worldOptions{slots: slots, maxHistory: 40})
	b := w.trigger(t, w.setting(t, kiln.PlatformLinux, "5.3", 0), hostComplete)
	if got := w.execution(t, b.ID); got != "FAILED" {
		t.Fatalf("execution ended %s, want FAILED past its history quota", got)
	}
	out := w.describe(t, b.ID)
	if out.error != "States.Runtime" || !strings.Contains(out.cause, "history") {
		t.Errorf("execution failed with %q: %q, want States.Runtime naming the history quota", out.error, out.cause)
	}
	got := w.waitFor(t, b.ID, "failed", func(b *kiln.Build) bool { return b.Status.Terminal() })
	if got.Status != kiln.StatusFailed {
		t.Errorf("build %s, want failed by the ended function", got.Status)
	}
}
