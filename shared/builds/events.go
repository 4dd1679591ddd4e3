package builds

import (
	"context"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Events hears of every change of a build's status, once per change and after it was written:
// from is the status the build left ("" for a build just created), b the build as written.
type Events interface {
	BuildChanged(ctx context.Context, from kiln.BuildStatus, b *kiln.Build)
}

// EventsFunc is a function that is Events.
type EventsFunc func(ctx context.Context, from kiln.BuildStatus, b *kiln.Build)

// BuildChanged calls f.
func (f EventsFunc) BuildChanged(ctx context.Context, from kiln.BuildStatus, b *kiln.Build) {
	f(ctx, from, b)
}

// CommitEvents hears of the commit a running build learnt (a build of a branch learns it at
// checkout). The lifecycle tells Events that also implement it.
type CommitEvents interface {
	CommitLearned(ctx context.Context, b *kiln.Build)
}

// CommitStatuses sets statuses on the commits builds build (GitHub commit statuses).
type CommitStatuses interface {
	Events
	CommitEvents
}

// WebhookQueue records organization webhook deliveries of a build's event.
type WebhookQueue interface {
	BuildChanged(ctx context.Context, b *kiln.Build)
}

// Notifier emails about a build that ended.
type Notifier interface {
	BuildEnded(ctx context.Context, b *kiln.Build)
}

// Waker wakes whoever works a queue.
type Waker interface {
	Notify()
}

// Fanout is kiln's Events, wired the same on one machine and in AWS: every change goes to the
// organization's webhooks; a build that ended ends its log with why and emails the user who
// triggered it (if its setting asks); a complete build waiting for auto deploy wakes the
// deliveries. Nil fields are skipped.
type Fanout struct {
	Webhooks   WebhookQueue
	Mail       Notifier
	Deliveries Waker
	// Logs gets the last line of builds that ended without a runner to write it (see EndLine).
	Logs LogWriter
	// Statuses hears of every change and of the commit a build learnt.
	Statuses CommitStatuses
	// Workflow hears of every build that ended (in AWS: answers the task token of the state
	// waiting for an agent's build).
	Workflow Ended
	// Caches hear of every build that ended: a build that did not complete keeps no cache it
	// uploaded (buildcache.Discarder).
	Caches Ended
	// Live hears of every change: it sends the build's new status to the sockets watching it.
	Live   Events
	Logger *slog.Logger
}

// Ended hears of a build that ended.
type Ended interface {
	BuildEnded(ctx context.Context, b *kiln.Build)
}

var (
	_ Events       = (*Fanout)(nil)
	_ CommitEvents = (*Fanout)(nil)
)

// CommitLearned tells Statuses of the commit a running build learnt.
func (f *Fanout) CommitLearned(ctx context.Context, b *kiln.Build) {
	if f.Statuses != nil {
		f.Statuses.CommitLearned(ctx, b)
	}
}

// BuildChanged fans a change out.
func (f *Fanout) BuildChanged(ctx context.Context, from kiln.BuildStatus, b *kiln.Build) {
	if b.Status == kiln.StatusComplete && b.AutoDeployStatus == kiln.AutoDeployPending && f.Deliveries != nil {
		f.Deliveries.Notify()
	}
	if b.Status.Terminal() && f.Logs != nil && !runnerWritesEndLine(b) {
		WriteEndLine(ctx, f.Logs, b, time.Now().UTC(), f.Logger)
	}
	if f.Webhooks != nil {
		f.Webhooks.BuildChanged(ctx, b)
	}
	if b.Status.Terminal() && f.Mail != nil {
		f.Mail.BuildEnded(ctx, b)
	}
	if f.Statuses != nil {
		f.Statuses.BuildChanged(ctx, from, b)
	}
	if b.Status.Terminal() && !from.Terminal() && f.Workflow != nil {
		f.Workflow.BuildEnded(ctx, b)
	}
	if b.Status.Terminal() && !from.Terminal() && f.Caches != nil {
		f.Caches.BuildEnded(ctx, b)
	}
	if f.Live != nil {
		f.Live.BuildChanged(ctx, from, b)
	}
}
