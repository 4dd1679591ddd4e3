package builds

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/wake"
)

// Scheduler starts the builds of settings with trigger scheduled: once per slot of their cron
// expression (UTC), building the branch's latest commit. A slot fires once even across restarts
// and across several schedulers: its build is keyed by (setting, slot).
type Scheduler struct {
	Store   SchedulerStore
	Service *Service
	Logger  *slog.Logger
	Now     func() time.Time
	// Every is how often schedules are checked (default 20 s).
	Every time.Duration
}

// SchedulerStore is what the scheduler reads.
type SchedulerStore interface {
	ScheduledBuildSettings(ctx context.Context) ([]*kiln.BuildSetting, error)
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
}

// catchUp is how far back a missed slot still fires (after a restart, say); older ones are
// skipped rather than all run at once.
const catchUp = 10 * time.Minute

// Run checks the schedules until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	every := s.Every
	if every <= 0 {
		every = 20 * time.Second
	}
	s.Tick(ctx)
	wake.Every(ctx, every, func(ctx context.Context) bool { s.Tick(ctx); return true })
}

// Tick fires the latest due slot of every schedule, as of Now.
func (s *Scheduler) Tick(ctx context.Context) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	s.TickAt(ctx, now())
}

// TickAt fires the latest slot of every schedule that is due at at.
func (s *Scheduler) TickAt(ctx context.Context, at time.Time) {
	at = at.UTC()
	settings, err := s.Store.ScheduledBuildSettings(ctx)
	if err != nil {
		s.log().ErrorContext(ctx, "list scheduled settings", slog.String("error", err.Error()))
		return
	}
	for _, st := range settings {
		slot, ok := LatestSlot(st.Schedule, at, st.CreatedAt)
		if !ok {
			continue
		}
		p, err := s.Store.GetProject(ctx, st.OrganizationID, st.ProjectID)
		if err != nil {
			continue
		}
		_, created, err := s.Service.Trigger(ctx, TriggerRequest{
			Project: p, Setting: st, TriggeredBy: "cron",
			IdempotencyKey: "cron:" + st.ID + ":" + strconv.FormatInt(slot.Unix(), 10), Fingerprint: "cron",
		})
		if kiln.IsCode(err, kiln.EPlanLimitReached) {
			continue // skipped for the plan, and recorded
		}
		if err != nil {
			s.log().ErrorContext(ctx, "scheduled build", slog.String("setting_id", st.ID), slog.String("error", err.Error()))
		} else if created {
			s.log().InfoContext(ctx, "scheduled build started", slog.String("setting_id", st.ID), slog.Time("slot", slot))
		}
	}
}

// LatestSlot is the latest time at or before now that the cron expression names, if it lies
// within the catch-up window and not before the setting existed.
func LatestSlot(expr string, now, since time.Time) (time.Time, bool) {
	sched, err := kiln.ParseSchedule(expr)
	if err != nil {
		return time.Time{}, false
	}
	from := now.Add(-catchUp)
	if since.After(from) {
		from = since
	}
	var latest time.Time
	for t := sched.Next(from.Add(-time.Second)); !t.After(now); t = sched.Next(t) {
		latest = t
	}
	return latest, !latest.IsZero()
}

func (s *Scheduler) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
