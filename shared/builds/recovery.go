package builds

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// The recovery of builds that cannot end by themselves: interrupted by a stop or a crash, or
// whose host went silent.

// Interrupted fails a running build whose run was cut short by the service stopping or
// crashing. A build no longer running is invalid_state.
func (l *Lifecycle) Interrupted(ctx context.Context, orgID, id string) (*kiln.Build, error) {
	b, _, _, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusRunning}, to: kiln.StatusFailed, reason: ReasonInterrupted,
	})
	return b, err
}

// Silent fails a running build whose host has not reported for kiln.HeartbeatTimeout, as read
// just before the write: a heartbeat that came meanwhile keeps it running (invalid_state).
func (l *Lifecycle) Silent(ctx context.Context, orgID, id string) (*kiln.Build, error) {
	b, _, _, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusRunning}, to: kiln.StatusFailed, reason: ReasonSilentHost,
		allow: func(b *kiln.Build) error {
			if !l.silent(b) {
				return kiln.Errorf(kiln.EInvalidState, "the build's host reported recently")
			}
			return nil
		},
	})
	return b, err
}

// silent reports whether a running build's host has been silent for longer than
// kiln.HeartbeatTimeout.
func (l *Lifecycle) silent(b *kiln.Build) bool {
	last := b.HeartbeatAt
	if last == nil {
		last = b.StartedAt
	}
	return last != nil && l.now().Sub(*last) > kiln.HeartbeatTimeout
}

// maxSweep bounds the running builds one sweep looks at.
const maxSweep = 100

// FailSilent fails the running builds (up to maxSweep of the oldest) whose host went silent,
// and returns them so that the caller can stop whatever still runs them.
func (l *Lifecycle) FailSilent(ctx context.Context) ([]*kiln.Build, error) {
	running, err := l.Builds.QueuedBuilds(ctx, kiln.StatusRunning, maxSweep)
	if err != nil {
		return nil, fmt.Errorf("list running builds: %w", err)
	}
	var failed []*kiln.Build
	for _, r := range running {
		if !l.silent(r) {
			continue
		}
		b, err := l.Silent(ctx, r.OrganizationID, r.ID)
		if err == nil {
			failed = append(failed, b)
		} else if !kiln.IsCode(err, kiln.EInvalidState) {
			l.log().ErrorContext(ctx, "fail a silent build", slog.String("build_id", r.ID), slog.String("error", err.Error()))
		}
	}
	return failed, nil
}

// NoteOnProject keeps a project's lastBuildAt and lastBuildStatus on its newest build; a build
// that is not the project's newest, or a deleted project, is left alone.
func NoteOnProject(ctx context.Context, builds store.Builds, projects store.Projects, b *kiln.Build, logger *slog.Logger) {
	newest, _, err := builds.ListBuilds(ctx, b.OrganizationID, store.BuildFilter{ProjectID: b.ProjectID}, store.Page{Limit: 1})
	if err != nil || len(newest) == 0 || newest[0].ID != b.ID {
		return
	}
	p, err := projects.GetProject(ctx, b.OrganizationID, b.ProjectID)
	if err != nil {
		return
	}
	at := b.CreatedAt
	p.LastBuildAt, p.LastBuildStatus = &at, b.Status
	if err := projects.UpdateProject(ctx, p); err != nil {
		logger.WarnContext(ctx, "note last build on project", slog.String("project_id", p.ID), slog.String("error", err.Error()))
	}
}
