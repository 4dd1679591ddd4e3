package stepfunctions

import (
	"context"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// slotWaitRe finds the WaitForSlot state's wait in the (indented) definition.
var slotWaitRe = regexp.MustCompile(`"Seconds":\s*` + strconv.Itoa(sfn.SlotWaitSeconds) + `\b`)

// shortSlotWait makes the WaitForSlot state wait one second instead of SlotWaitSeconds.
func shortSlotWait(definition string) string {
	return slotWaitRe.ReplaceAllString(definition, `"Seconds": 1`)
}

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
	if !slotWaitRe.MatchString(sfn.Definition()) {
		t.Fatal("the definition's WaitForSlot state was not found to shorten")
	}
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
