package local

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/wake"
)

// failInterrupted fails the builds a previous run of this machine left running: their engine
// process died with it, so they cannot finish. (Re-running them would repeat work the customer
// may no longer want; a failed build with a clear reason can be triggered again.) A build held
// by a remote host (an agent, with a host credential) runs on: its host reports through the host
// API, and the silent-host check fails it if it stopped.
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
			if b.HostCredentialHash == "" {
				w.interrupted(ctx, b)
			}
		}
		if !progress {
			return nil
		}
	}
}

// watch fails running builds whose host has not reported for kiln.HeartbeatTimeout, and stops
// them if they run here.
func (w *Workflow) watch(ctx context.Context) {
	wake.Every(ctx, watchEvery, func(ctx context.Context) bool {
		failed, err := w.builds.FailSilent(ctx)
		if err != nil {
			w.logger.ErrorContext(ctx, "look for silent build hosts", slog.String("error", err.Error()))
		}
		for _, b := range failed {
			_ = w.Stop(ctx, b)
		}
		if err := w.failUnclaimed(ctx); err != nil {
			w.logger.ErrorContext(ctx, "look for builds no agent claimed", slog.String("error", err.Error()))
		}
		return true
	})
}

// failUnclaimed fails the pending builds for an agent pool that no agent claimed within
// AgentWait, with a reason that names the pool and the wait.
func (w *Workflow) failUnclaimed(ctx context.Context) error {
	pending, err := w.pending(ctx)
	if err != nil {
		return err
	}
	wait := cmp.Or(w.AgentWait, DefaultAgentWait)
	now := time.Now()
	for _, b := range pending {
		if b.AgentPool == "" || now.Sub(b.CreatedAt) < wait {
			continue
		}
		reason := fmt.Sprintf("no agent in pool %s claimed the build within %s", b.AgentPool, wait)
		if _, err := w.builds.Fail(ctx, b.OrganizationID, b.ID, reason); err != nil && !kiln.IsCode(err, kiln.EInvalidState) {
			w.logger.ErrorContext(ctx, "fail a build no agent claimed", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		}
	}
	return nil
}

// interrupted fails a build that is still running as interrupted.
func (w *Workflow) interrupted(ctx context.Context, b *kiln.Build) {
	if _, err := w.builds.Interrupted(ctx, b.OrganizationID, b.ID); err != nil && !kiln.IsCode(err, kiln.EInvalidState) {
		w.logger.ErrorContext(ctx, "fail an interrupted build", slog.String("build_id", b.ID), slog.String("error", err.Error()))
	}
}
