package builds

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// usedUp is a plan whose build minutes are used up (or not).
type usedUp struct{ out bool }

func (u *usedUp) CheckStart(ctx context.Context, b *kiln.Build) error {
	if u.out {
		return kiln.PlanLimitError(kiln.PlanFree, "2 build minutes per month, and those of 2026-11 are used (2)")
	}
	return nil
}

// TestClaimsCheckThePlan: both claims (a local worker's, a remote host's or agent's) refuse a
// pending build once its plan's minutes are used up: the build fails with the plan's reason, no
// host is recorded, and the answer is invalid_state. A claim repeated by the host that already
// runs the build is not refused.
func TestClaimsCheckThePlan(t *testing.T) {
	ctx := context.Background()
	claims := map[string]func(w *lifecycleWorld, id string) (*kiln.Build, error){
		"local": func(w *lifecycleWorld, id string) (*kiln.Build, error) {
			return w.lc.Claim(ctx, w.org, id, "local/worker-1")
		},
		"host": func(w *lifecycleWorld, id string) (*kiln.Build, error) {
			return w.lc.ClaimHost(ctx, w.org, id, "agent:a1", "hash", time.Second)
		},
	}
	for name, claim := range claims {
		t.Run(name, func(t *testing.T) {
			w := newLifecycleWorld(t)
			plan := &usedUp{}
			w.lc.Starts = plan
			running := w.build(t, kiln.StatusPending)
			if _, err := claim(w, running.ID); err != nil {
				t.Fatalf("claim with minutes left: %v", err)
			}
			plan.out = true
			if _, err := claim(w, running.ID); err != nil {
				t.Fatalf("the holder's repeated claim after the minutes ran out: %v", err)
			}
			waiting := w.build(t, kiln.StatusPending)
			got, err := claim(w, waiting.ID)
			if kiln.ErrorCode(err) != kiln.EInvalidState || got != nil {
				t.Fatalf("claim after the minutes ran out: %v, %v; want invalid_state", got, err)
			}
			s := w.status(t, waiting.ID)
			if s.Status != kiln.StatusFailed || !strings.HasPrefix(s.FailureReason, ReasonPlanLimit+"the free plan allows 2 build minutes") ||
				s.Host != "" || s.StartedAt != nil || s.HostCredentialHash != "" {
				t.Fatalf("the refused build: %+v", s)
			}
		})
	}
}
