package builds

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// EndLine is the last line of the log of a build that did not complete, saying why it ended, so
// that the log alone tells the story: "kiln: build failed: <reason>" (a failure, cancelled,
// interrupted, time limit, a silent host) or "kiln: build superseded: ...". ok is false for a
// build that has not ended or completed.
func EndLine(b *kiln.Build, at time.Time) (line kiln.LogLine, ok bool) {
	switch b.Status {
	case kiln.StatusFailed:
		return kiln.LogLine{Time: at, Level: kiln.LevelError, Message: "kiln: build failed: " + b.FailureReason}, true
	case kiln.StatusSuperseded:
		return kiln.LogLine{Time: at, Level: kiln.LevelWarn,
			Message: "kiln: build superseded: a newer build of the same branch, platform and build type was queued"}, true
	default:
		return kiln.LogLine{}, false
	}
}

// writeEndLine appends b's EndLine to its log, if it has one.
func writeEndLine(ctx context.Context, logs LogWriter, b *kiln.Build, at time.Time, logger *slog.Logger) {
	line, ok := EndLine(b, at)
	if !ok || logs == nil {
		return
	}
	if err := appendLine(ctx, logs, b, line); err != nil && logger != nil {
		logger.WarnContext(ctx, "write the build's last log line", slog.String("build_id", b.ID), slog.String("error", err.Error()))
	}
}

// EndLineWriter writes the last log line of builds the service ends outside a runner: pending
// builds cancelled or superseded, and running builds whose runner is gone (interrupted by a
// stop or a crash). A build that a runner was running gets its line from the runner once the
// runner has stopped, so that the line is the log's last. Call it whenever a build changes.
func EndLineWriter(logs LogWriter, logger *slog.Logger) func(ctx context.Context, b *kiln.Build) {
	return func(ctx context.Context, b *kiln.Build) {
		if b.StartedAt != nil && !strings.HasPrefix(b.FailureReason, "interrupted") {
			return // the runner says it
		}
		writeEndLine(context.WithoutCancel(ctx), logs, b, time.Now(), logger)
	}
}
