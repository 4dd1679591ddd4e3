package local

import (
	"context"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// failInterrupted fails the builds a previous run of this machine left running: their engine
// process died with it, so they cannot finish. (Re-running them would repeat work the customer
// may no longer want; a failed build with a clear reason can be triggered again.)
func (w *Workflow) failInterrupted(ctx context.Context) error {
	seen := map[string]bool{}
	for {
		running, err := w.store.QueuedBuilds(ctx, kiln.StatusRunning, 100)
		if err != nil {
			return err
		}
		progress := false
		for _, b := range running {
			if seen[b.ID] {
				continue
			}
			seen[b.ID] = true
			progress = true
			w.failRunning(ctx, b.OrganizationID, b.ID, "interrupted: the service stopped while the build ran; trigger it again")
		}
		if !progress {
			return nil
		}
	}
}

// watch fails running builds whose host has not reported for kiln.HeartbeatTimeout.
func (w *Workflow) watch(ctx context.Context) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		running, err := w.store.QueuedBuilds(ctx, kiln.StatusRunning, 100)
		if err != nil {
			continue
		}
		for _, b := range running {
			last := b.HeartbeatAt
			if last == nil {
				last = b.StartedAt
			}
			if last != nil && w.now().Sub(*last) > kiln.HeartbeatTimeout {
				w.failRunning(ctx, b.OrganizationID, b.ID, "the build host stopped reporting for 30 seconds")
				_ = w.Stop(ctx, b)
			}
		}
	}
}

// failRunning fails a build that is still running, with a reason.
func (w *Workflow) failRunning(ctx context.Context, orgID, buildID, reason string) {
	b, err := w.store.GetBuild(ctx, orgID, buildID)
	if err != nil || b.Status != kiln.StatusRunning {
		return
	}
	if err := b.Transition(kiln.StatusFailed, w.now(), reason); err != nil {
		return
	}
	if err := w.store.UpdateBuild(ctx, b, kiln.StatusRunning); err != nil {
		if !kiln.IsCode(err, kiln.EInvalidState) {
			w.logger.ErrorContext(ctx, "fail a build", slog.String("build_id", buildID), slog.String("error", err.Error()))
		}
		return
	}
	builds.NoteOnProject(ctx, w.store, b, w.logger)
	if w.Ended != nil {
		w.Ended(ctx, b)
	}
}
