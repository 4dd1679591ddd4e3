package builds

import (
	"context"
	"fmt"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// LogWriter keeps build logs: lines numbered 1, 2, 3, ... per build, appended in order by one
// writer. Appending numbers already written again writes nothing new, so a failed append can be
// retried as it was.
type LogWriter interface {
	Append(ctx context.Context, orgID, buildID string, first int64, lines ...kiln.LogLine) error
	// Last is the number of the last line written, 0 for none.
	Last(ctx context.Context, orgID, buildID string) (int64, error)
}

// AppendLine adds one line at the end of a build's log whose reporter is closed.
func AppendLine(ctx context.Context, logs LogWriter, b *kiln.Build, l kiln.LogLine) error {
	last, err := logs.Last(ctx, b.OrganizationID, b.ID)
	if err != nil {
		return fmt.Errorf("build log: %w", err)
	}
	if err := logs.Append(ctx, b.OrganizationID, b.ID, last+1, l); err != nil {
		return fmt.Errorf("build log: %w", err)
	}
	return nil
}
