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
		return kiln.LogLine{Time: at, Level: kiln.LevelError, Message: endFailed + b.FailureReason}, true
	case kiln.StatusSuperseded:
		return kiln.LogLine{Time: at, Level: kiln.LevelWarn,
			Message: endSuperseded + "a newer build of the same branch, platform and build type was queued"}, true
	default:
		return kiln.LogLine{}, false
	}
}

// The beginnings of the end lines, by which LogComplete knows one.
const (
	endFailed     = "kiln: build failed: "
	endSuperseded = "kiln: build superseded: "
)

// WriteEndLine appends b's EndLine to its log, if it has one.
func WriteEndLine(ctx context.Context, logs LogWriter, b *kiln.Build, at time.Time, logger *slog.Logger) {
	line, ok := EndLine(b, at)
	if !ok || logs == nil {
		return
	}
	if err := AppendLine(context.WithoutCancel(ctx), logs, b, line); err != nil && logger != nil {
		logger.WarnContext(ctx, "write the build's last log line", slog.String("build_id", b.ID), slog.String("error", err.Error()))
	}
}

// runnerWritesEndLine reports whether a runner writes b's last log line itself, once it has
// stopped, so that the line is the log's last: a build that started in-process, unless it was
// interrupted (its runner is gone). The events write the line of every other ended build:
// pending builds cancelled, superseded or that could not start, interrupted ones, and builds of
// remote hosts (whose calls are refused once the build ended, so their lines end before it).
func runnerWritesEndLine(b *kiln.Build) bool {
	return b.StartedAt != nil && b.HostCredentialHash == "" && !strings.HasPrefix(b.FailureReason, "interrupted")
}
