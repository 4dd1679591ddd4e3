package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/agent"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// reporter turns the agent's reports into build log lines, written in small batches so a chatty
// engine does not cost a write per line. A build's log holds at most maxLines lines (0: no
// limit): past them one marker line says so and the rest is dropped, while the build goes on.
// The count lives as long as the build's run, which is its whole life: a build a restart
// interrupted is failed, never continued.
type reporter struct {
	logs     LogWriter
	build    *kiln.Build
	now      func() time.Time
	maxLines int
	mu       sync.Mutex
	pending  []kiln.LogLine
	last     time.Time
	lines    int  // lines kept so far
	dropping bool // the limit was reached and the marker written
}

// DefaultMaxLogLines is the default limit of a build's log (KILN_LOG_MAX_LINES).
const DefaultMaxLogLines = 200_000

// truncatedMarker is the line that ends a log cut at n lines.
func truncatedMarker(n int) string {
	return fmt.Sprintf("kiln: log truncated after %d lines; the rest of this build's output is dropped", n)
}

// flushEvery bounds how long a line waits before it is written (and visible to followers).
const flushEvery = 200 * time.Millisecond

func (r *reporter) Stage(ctx context.Context, s agent.Stage) {
	r.add(ctx, kiln.LogLine{Time: r.now(), Level: kiln.LevelInfo, Message: "==> kiln: stage " + string(s)})
}

func (r *reporter) Log(ctx context.Context, l agent.LogLine) {
	r.add(ctx, kiln.LogLine{Time: l.Time.UTC(), Level: kiln.LogLevel(l.Level), Message: l.Message})
}

func (r *reporter) add(ctx context.Context, l kiln.LogLine) {
	r.mu.Lock()
	switch {
	case r.dropping:
		r.mu.Unlock()
		return
	case r.maxLines > 0 && r.lines >= r.maxLines:
		r.dropping = true
		l = kiln.LogLine{Time: r.now(), Level: kiln.LevelWarn, Message: truncatedMarker(r.lines)}
	default:
		r.lines++
	}
	r.pending = append(r.pending, l)
	due := len(r.pending) >= 256 || time.Since(r.last) >= flushEvery
	r.mu.Unlock()
	if due {
		r.flush(ctx)
	}
}

func (r *reporter) flush(ctx context.Context) {
	r.mu.Lock()
	lines := r.pending
	r.pending = nil
	r.last = time.Now()
	r.mu.Unlock()
	if len(lines) > 0 {
		_ = r.logs.Append(context.WithoutCancel(ctx), r.build.OrganizationID, r.build.ID, lines...)
	}
}

// flushPeriodically writes waiting lines every flushEvery, so a quiet engine's last line shows
// soon; the returned function stops it.
func (r *reporter) flushPeriodically(ctx context.Context) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(flushEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.flush(ctx)
			}
		}
	}()
	return func() { close(done); <-stopped }
}
