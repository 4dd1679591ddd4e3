package live

import (
	"context"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// LogWriter is a build log store's writing side.
type LogWriter interface {
	Append(ctx context.Context, orgID, buildID string, first int64, lines ...kiln.LogLine) error
	Last(ctx context.Context, orgID, buildID string) (int64, error)
}

// Publishing is a log writer whose stored lines also go to the sockets watching their build:
// every line reaches them from where it is written, not from polling the store.
type Publishing struct {
	LogWriter
	Live *Service
	// Background sends in a goroutine, so a slow socket never holds up the writer (a process
	// that lives on); otherwise the lines are sent before Append returns (a Lambda, which may be
	// frozen as soon as it answers).
	Background bool
}

// Append stores the lines, then sends them.
func (p Publishing) Append(ctx context.Context, orgID, buildID string, first int64, lines ...kiln.LogLine) error {
	if err := p.LogWriter.Append(ctx, orgID, buildID, first, lines...); err != nil {
		return err
	}
	if p.Live == nil {
		return nil
	}
	if p.Background {
		go p.Live.LinesWritten(context.WithoutCancel(ctx), orgID, buildID, first, lines)
	} else {
		p.Live.LinesWritten(ctx, orgID, buildID, first, lines)
	}
	return nil
}
