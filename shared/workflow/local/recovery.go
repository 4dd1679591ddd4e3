package local

import (
	"context"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// failInterrupted fails the builds a previous run of this machine left running: their engine
// process died with it, so they cannot finish. (Re-running them would repeat work the customer
// may no longer want; a failed build with a clear reason can be triggered again.)
func (w *Workflow) failInterrupted(ctx context.Context) error {
	seen := map[string]bool{}
	for {
		running, err := w.queue.QueuedBuilds(ctx, kiln.StatusRunning, 100)
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
			w.interrupted(ctx, b)
		}
		if !progress {
			return nil
		}
	}
}

// watch fails running builds whose host has not reported for kiln.HeartbeatTimeout, and stops
// them if they run here.
func (w *Workflow) watch(ctx context.Context) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		failed, err := w.builds.FailSilent(ctx)
		if err != nil {
			w.logger.ErrorContext(ctx, "look for silent build hosts", slog.String("error", err.Error()))
		}
		for _, b := range failed {
			_ = w.Stop(ctx, b)
		}
	}
}

// interrupted fails a build that is still running as interrupted.
func (w *Workflow) interrupted(ctx context.Context, b *kiln.Build) {
	if _, err := w.builds.Interrupted(ctx, b.OrganizationID, b.ID); err != nil && !kiln.IsCode(err, kiln.EInvalidState) {
		w.logger.ErrorContext(ctx, "fail an interrupted build", slog.String("build_id", b.ID), slog.String("error", err.Error()))
	}
}
