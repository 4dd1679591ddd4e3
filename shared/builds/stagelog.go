package builds

import (
	"context"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// StageLog is a build log that also records on the build the stages its lines announce
// ("==> kiln: stage <name>", see kiln.StageLinePrefix): every runner's lines come through it,
// kiln serve's own and a remote host's through the host API, so every kind of host shows its
// build's stage. The lines are written first; failing to record a stage is logged and leaves the
// append successful (the log is what the host retries).
type StageLog struct {
	LogWriter
	Lifecycle *Lifecycle
	Logger    *slog.Logger
}

// Append appends the lines, then records the stages they enter.
func (s StageLog) Append(ctx context.Context, orgID, buildID string, first int64, lines ...kiln.LogLine) error {
	if err := s.LogWriter.Append(ctx, orgID, buildID, first, lines...); err != nil {
		return err
	}
	var entered []kiln.BuildStage
	for _, l := range lines {
		if name, ok := kiln.StageOfLine(l.Message); ok {
			entered = append(entered, kiln.BuildStage{Name: name, StartedAt: l.Time})
		}
	}
	if len(entered) == 0 {
		return nil
	}
	err := s.Lifecycle.EnterStages(ctx, orgID, buildID, entered)
	if err != nil && !kiln.IsCode(err, kiln.EInvalidState) && s.Logger != nil {
		s.Logger.WarnContext(ctx, "record a build's stage", slog.String("build_id", buildID),
			slog.String("org_id", orgID), slog.String("error", err.Error()))
	}
	return nil
}

// EnterStages records that a running build entered stages (their names and StartedAt), in
// order; a stage it is already in is not entered again. The times are the host's: each is kept
// between the previous stage's start (or the build's) and now, the service's clock, so a host
// whose clock is off cannot make a stage begin before the build or in the future. A build no
// longer running is invalid_state.
func (l *Lifecycle) EnterStages(ctx context.Context, orgID, id string, stages []kiln.BuildStage) error {
	_, _, _, err := l.apply(ctx, orgID, id, change{
		from: []kiln.BuildStatus{kiln.StatusRunning}, to: kiln.StatusRunning,
		edit: func(b *kiln.Build) {
			now := l.now()
			for _, st := range stages {
				at := st.StartedAt
				if floor := stageFloor(b); at.Before(floor) {
					at = floor
				}
				if at.After(now) {
					at = now
				}
				b.EnterStage(st.Name, at)
			}
		},
	})
	return err
}

// stageFloor is the earliest a build's next stage may begin: when its last stage began, or the
// build started.
func stageFloor(b *kiln.Build) time.Time {
	if n := len(b.Stages); n > 0 {
		return b.Stages[n-1].StartedAt
	}
	if b.StartedAt != nil {
		return *b.StartedAt
	}
	return time.Time{}
}
