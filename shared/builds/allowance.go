package builds

import (
	"context"
	"log/slog"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Allowance tells whether an organization may start a build now (plans.Plans): nil, or
// plan_limit_reached once its build minutes are used up.
type Allowance interface {
	CheckMinutes(ctx context.Context, orgID string) error
}

// SkipStore counts triggers skipped for the plan, once per key (store.Usage).
type SkipStore interface {
	RecordSkippedTrigger(ctx context.Context, orgID, month string, trigger kiln.Trigger, key string) error
}

// SkipEvents hears of every trigger skipped for the plan, once (the organization's webhooks,
// event build.skipped).
type SkipEvents interface {
	TriggerSkipped(ctx context.Context, s *kiln.SkippedTrigger)
}

// triggerOf tells what kind of trigger a triggeredBy names.
func triggerOf(triggeredBy string) kiln.Trigger {
	switch {
	case strings.HasPrefix(triggeredBy, "push:"):
		return kiln.TriggerPush
	case triggeredBy == "cron":
		return kiln.TriggerScheduled
	}
	return kiln.TriggerManual
}

// allow checks the organization's build minutes before a trigger starts a build. A manual
// trigger over the allowance is refused with plan_limit_reached; a push or scheduled one is
// skipped: recorded once (its idempotency key tells a redelivery apart), told to SkipEvents,
// and answered with the same plan_limit_reached error, which its caller logs and moves on from.
func (s *Service) allow(ctx context.Context, req TriggerRequest) error {
	if s.Allowance == nil {
		return nil
	}
	err := s.Allowance.CheckMinutes(ctx, req.Project.OrganizationID)
	if err == nil || !kiln.IsCode(err, kiln.EPlanLimitReached) {
		return err
	}
	trigger := triggerOf(req.TriggeredBy)
	if trigger == kiln.TriggerManual || s.Skips == nil {
		return err
	}
	now := s.now()
	key := req.IdempotencyKey
	if key == "" {
		key = "skip:" + kiln.NewID()
	}
	skipped := &kiln.SkippedTrigger{
		OrganizationID: req.Project.OrganizationID, ProjectID: req.Project.ID, BuildSettingID: req.Setting.ID,
		Trigger: trigger, TriggeredBy: req.TriggeredBy, Reason: kiln.ErrorMessage(err), At: now,
	}
	skipped.Branch, skipped.Commit = req.ref() // those of the build it would have started
	rerr := s.Skips.RecordSkippedTrigger(context.WithoutCancel(ctx), skipped.OrganizationID, kiln.UsageMonth(now), trigger, key)
	switch {
	case kiln.IsCode(rerr, kiln.EConflict):
		return err // recorded and told before
	case rerr != nil:
		s.log().ErrorContext(ctx, "record a skipped trigger", slog.String("setting_id", req.Setting.ID), slog.String("error", rerr.Error()))
		return err
	}
	s.log().InfoContext(ctx, "trigger skipped: the plan's build minutes are used up", slog.String("org_id", skipped.OrganizationID),
		slog.String("setting_id", req.Setting.ID), slog.String("trigger", string(trigger)))
	if s.SkipEvents != nil {
		s.SkipEvents.TriggerSkipped(context.WithoutCancel(ctx), skipped)
	}
	return err
}
