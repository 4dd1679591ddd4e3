package hostclient

import (
	"context"
	"fmt"
	"net/http"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// logWriter is the build's log in the service (builds.LogWriter): the runner's reporter batches,
// numbers and retries the lines as it does in-process.
type logWriter struct{ c *Client }

var _ builds.LogWriter = logWriter{}

func (l logWriter) Append(ctx context.Context, orgID, buildID string, first int64, lines ...kiln.LogLine) error {
	// One request per MaxLogBatch lines; longer messages are cut as every log store cuts them
	// (to buildlog.MaxLineBytes, the host API's limit, ending with buildlog.CutMarker).
	for len(lines) > 0 {
		n := min(len(lines), agentapi.MaxLogBatch)
		req := agentapi.LogsRequest{First: first, Lines: make([]agentapi.LogLine, n)}
		for i, l := range lines[:n] {
			msg := buildlog.Cut(l.Message)
			req.Lines[i] = agentapi.LogLine{Timestamp: l.Time, Level: string(l.Level), Message: msg}
		}
		if err := l.c.call(ctx, http.MethodPost, "logs", req, nil); err != nil {
			return fmt.Errorf("append log lines: %w", err)
		}
		first += int64(n)
		lines = lines[n:]
	}
	return nil
}

func (l logWriter) Last(ctx context.Context, orgID, buildID string) (int64, error) {
	var last agentapi.LastLogLine
	if err := l.c.call(ctx, http.MethodGet, "logs/last", nil, &last); err != nil {
		return 0, fmt.Errorf("last log line: %w", err)
	}
	return last.Last, nil
}
