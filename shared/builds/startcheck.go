package builds

import (
	"context"
	"errors"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// StartCheck tells whether a pending build may start now under its organization's plan
// (plans.Plans.CheckStart): nil, or plan_limit_reached once its build minutes are used up.
type StartCheck interface {
	CheckStart(ctx context.Context, b *kiln.Build) error
}

// ReasonPlanLimit starts the failure reason of a build its plan did not let start; the plan's
// own message follows.
const ReasonPlanLimit = "plan limit: "

// startRefused is what a claim's check answers for a build its plan does not let start.
type startRefused struct{ reason string }

func (e *startRefused) Error() string { return e.reason }

// mayStart is the claim's check of a pending build (nil for a build already running: a repeated
// claim of the host that holds it). A plan that refuses the build is a startRefused error.
func (l *Lifecycle) mayStart(ctx context.Context, b *kiln.Build) error {
	if l.Starts == nil || b.Status != kiln.StatusPending {
		return nil
	}
	err := l.Starts.CheckStart(ctx, b)
	if kiln.IsCode(err, kiln.EPlanLimitReached) {
		return &startRefused{reason: ReasonPlanLimit + kiln.ErrorMessage(err)}
	}
	return err
}

// refuseStart fails a build its plan did not let start, instead of claiming it, and answers
// invalid_state as for a build that ended before its claim: the caller moves on and never
// starts it (no checkout, no host, no credential).
func (l *Lifecycle) refuseStart(ctx context.Context, orgID, id string, err error) error {
	var refused *startRefused
	if !errors.As(err, &refused) {
		return err
	}
	if _, ferr := l.Fail(context.WithoutCancel(ctx), orgID, id, refused.reason); ferr != nil && !kiln.IsCode(ferr, kiln.EInvalidState) {
		return ferr
	}
	l.log().InfoContext(ctx, "build not started: its plan's allowance is used up", slog.String("build_id", id),
		slog.String("org_id", orgID), slog.String("reason", refused.reason))
	return kiln.Errorf(kiln.EInvalidState, "the build did not start: %s", refused.reason)
}
