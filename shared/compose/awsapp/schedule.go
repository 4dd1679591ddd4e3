package awsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/live"
	"github.com/kilnbuild/kiln/shared/store"
)

// Schedule is the schedule Lambda's work, one tick per event of a one-minute EventBridge rule:
// the scheduled builds that are due, the running builds whose host went silent, the day's artifact
// retention, and one delivery message per due auto deploy and webhook delivery. Ticks are safe to
// run twice or at once: a schedule's slot is one build (keyed by setting and slot), a silent build
// fails once (a conditional write), the day's retention runs once (a once-key), and a delivery
// queued twice is attempted once (the attempt claims it).
type Schedule struct {
	scheduler *builds.Scheduler
	lifecycle *builds.Lifecycle
	workflow  builds.Workflow
	janitor   *builds.Janitor
	once      store.OnceKeys
	bg        *background
	queue     DeliveryQueue
	// reapers look after kiln's hosted hosts, one per hosted pool (none: the deployment has none).
	reapers []*hostedhosts.Reaper
	// live pings the sockets of live build events (nil: the deployment has no WebSocket API).
	live   *live.Service
	logger *slog.Logger
	now    func() time.Time
}

// RetentionHour is the hour (UTC) from which the day's artifact retention runs: on the first
// tick at or after it.
const RetentionHour = 3

// retentionScope is the once-key scope of the retention marker: the deployment, no organization.
const retentionScope = ""

// NewSchedule wires a tick on ready parts.
func NewSchedule(cfg BackgroundConfig, p Parts) (*Schedule, error) {
	if p.Queue == nil || p.Workflow == nil {
		return nil, errors.New("schedule: a delivery queue and a workflow are required")
	}
	bg, err := newBackground(cfg, p)
	if err != nil {
		return nil, err
	}
	svc := bg.core.Builds
	reapers, err := cfg.HostedHosts.reapers(p)
	if err != nil {
		return nil, err
	}
	janitor := &builds.Janitor{Store: p.Store, Artifacts: p.Artifacts, Retention: cfg.ArtifactRetention, Logger: p.Logger, Now: p.Now}
	if bg.core.Caches != nil { // never a nil *Cache in the interface
		janitor.Caches, janitor.Projects = bg.core.Caches, p.Store
	}
	var sockets *live.Service
	if bg.core.Live != nil {
		if sockets, err = newLiveService(bg.core); err != nil {
			return nil, err
		}
	}
	return &Schedule{
		live:      sockets,
		reapers:   reapers,
		scheduler: &builds.Scheduler{Store: p.Store, Service: svc, Logger: p.Logger, Now: p.Now},
		lifecycle: bg.lifecycle, workflow: p.Workflow, once: p.Store, bg: bg, queue: p.Queue, logger: p.Logger,
		janitor: janitor,
		now:     func() time.Time { return kiln.Now(p.Now) },
	}, nil
}

// Handle is the Lambda handler: one tick at the event's time.
func (s *Schedule) Handle(ctx context.Context, ev events.CloudWatchEvent) error {
	return s.Tick(ctx, ev.Time)
}

// Tick does one tick's work; at (the rule's time, now when zero) decides the day's retention.
// Each part runs whatever the others did; their errors are returned together, so that the
// invocation counts as failed (an alarm) and EventBridge retries it.
func (s *Schedule) Tick(ctx context.Context, at time.Time) error {
	if at.IsZero() {
		at = s.now()
	}
	s.scheduler.TickAt(ctx, at) // the rule's time: the slots due then fire
	var errs []error
	if s.live != nil {
		// Engine.IO's ping, which API Gateway cannot send by itself; a token that expired while
		// its socket stayed connected ends here too.
		if err := s.live.PingAll(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := s.live.RecheckAll(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.failSilent(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.retention(ctx, at.UTC()); err != nil {
		errs = append(errs, err)
	}
	for _, r := range s.reapers {
		if err := r.Tick(ctx); err != nil {
			errs = append(errs, fmt.Errorf("hosted hosts of pool %s: %w", r.Pool, err))
		}
	}
	n, err := s.bg.queueDue(ctx, s.queue, s.now())
	if err != nil {
		errs = append(errs, fmt.Errorf("queue due deliveries: %w", err))
	}
	if n > 0 {
		s.logger.InfoContext(ctx, "due deliveries queued", slog.Int("count", n))
	}
	return errors.Join(errs...)
}

// failSilent fails the running builds whose host went silent and stops what still runs them.
func (s *Schedule) failSilent(ctx context.Context) error {
	failed, err := s.lifecycle.FailSilent(ctx)
	if err != nil {
		return fmt.Errorf("fail silent builds: %w", err)
	}
	for _, b := range failed {
		s.logger.InfoContext(ctx, "silent build failed", slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID))
		if err := s.workflow.Stop(ctx, b); err != nil {
			s.logger.WarnContext(ctx, "stop a silent build", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		}
	}
	return nil
}

// retention runs the artifact retention once a day, on the first tick at or after RetentionHour
// (UTC). The day is claimed with a once-key before the sweep: one tick of the day sweeps even
// when two run at once or EventBridge retries one, and a tick that was lost does not skip the day
// (a window of one minute would). A sweep that fails midway goes on the next day: it deletes
// whatever is older than the cutoff then.
func (s *Schedule) retention(ctx context.Context, at time.Time) error {
	if at.Hour() < RetentionHour {
		return nil
	}
	day := at.Format(time.DateOnly)
	err := s.once.UseOnce(ctx, retentionScope, "artifact-retention:"+day, at, at.Add(48*time.Hour))
	if kiln.IsCode(err, kiln.EConflict) {
		return nil // swept today already
	}
	if err != nil {
		return fmt.Errorf("claim the day's retention: %w", err)
	}
	deleted, err := s.janitor.Sweep(ctx)
	s.logger.InfoContext(ctx, "artifact retention", slog.String("day", day), slog.Int("deleted", deleted))
	if err != nil {
		return fmt.Errorf("artifact retention: %w", err)
	}
	return nil
}

// NewAWSSchedule is the schedule Lambda's composition: its parts from AWS (LoadParts).
func NewAWSSchedule(ctx context.Context, cfg BackgroundConfig, logger *slog.Logger) (*Schedule, error) {
	p, err := LoadParts(ctx, cfg, Secrets{GitHubApp: true}, logger)
	if err != nil {
		return nil, err
	}
	return NewSchedule(cfg, p)
}
