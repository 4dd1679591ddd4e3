package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/client/liveclient"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Follow calls visit with every line of the build's log, in order and once each, until the build
// ended and its log is whole, and answers the build's status then. The lines come over the live
// events (Socket.IO at /socket.io/, joined from the first line) where the server offers them,
// and from the long-polled log pages (Logs) where it does not: a server without live events, a
// proxy that does not pass WebSockets, a socket lost for good midway (the pages then skip the
// lines already given). Either way visit sees the same lines.
func (c *Client) Follow(ctx context.Context, buildID string, visit func(LogLine) error) (string, error) {
	var seen int64
	counted := func(l LogLine) error {
		seen = l.Seq
		return visit(l)
	}
	status, err := c.followLive(ctx, buildID, counted)
	var off *liveOff
	if !errors.As(err, &off) {
		return status, err
	}
	slog.DebugContext(ctx, "following the log by long-polling", slog.String("build_id", buildID), slog.String("why", off.Error()))
	return c.Logs(ctx, buildID, true, func(l LogLine) error {
		if l.Seq <= seen {
			return nil // given over the socket before it was lost
		}
		return counted(l)
	})
}

// liveOff says why the live events cannot be used (any more): the log pages take over.
type liveOff struct{ err error }

func (e *liveOff) Error() string { return e.err.Error() }
func (e *liveOff) Unwrap() error { return e.err }

// followLive follows the build over the live events. It ends when the build ended and its log is
// whole, as the log pages say it (builds.LogComplete: a failed or superseded build's last line,
// the one saying why it ended, is written just after its status changed).
func (c *Client) followLive(ctx context.Context, buildID string, visit func(LogLine) error) (string, error) {
	lc, err := liveclient.Dial(ctx, c.baseURL, c.token, liveclient.Options{HTTPClient: c.http, ConnectTimeout: 10 * time.Second,
		RetryDelay: c.retryBase / 2, MaxRetryDelay: 5 * c.retryBase})
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("follow %s: %w", buildID, ctx.Err())
		}
		return "", &liveOff{err}
	}
	defer lc.Close()
	if err := lc.Join(ctx, buildID, 0); err != nil {
		// Refused (no such build, say): the log pages give the API's own error.
		return "", &liveOff{err}
	}
	var ended *liveclient.Status
	last := ""
	for {
		next, cancel := ctx, context.CancelFunc(func() {})
		if ended != nil {
			finished := parseTime(ended.FinishedAt)
			b := &kiln.Build{Status: kiln.BuildStatus(ended.Status), FinishedAt: finished}
			if builds.LogComplete(b, last, time.Now()) {
				return ended.Status, nil
			}
			// Its last lines may still come, until the log settles.
			settled := time.Now().Add(builds.LogSettle)
			if finished != nil && finished.Add(builds.LogSettle).Before(settled) {
				settled = finished.Add(builds.LogSettle)
			}
			next, cancel = context.WithDeadline(ctx, settled)
		}
		e, err := lc.Next(next)
		settledNow := next.Err() != nil
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return "", fmt.Errorf("follow %s: %w", buildID, ctx.Err())
		case err != nil && ended != nil && settledNow:
			return ended.Status, nil // settled
		case err != nil:
			return "", &liveOff{err}
		case e.Refused != nil:
			return "", &liveOff{e.Refused}
		case e.Status != nil && kiln.BuildStatus(e.Status.Status).Terminal():
			ended = e.Status
		case e.Log != nil:
			last = e.Log.Message
			l := LogLine{Seq: e.Log.Seq, LogLine: api.LogLine{Timestamp: e.Log.Timestamp, Level: e.Log.Level, Message: e.Log.Message}}
			if err := visit(l); err != nil {
				status := ""
				if ended != nil {
					status = ended.Status
				}
				return status, err
			}
		}
	}
}

func parseTime(s *string) *time.Time {
	if s == nil {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil
	}
	return &t
}
