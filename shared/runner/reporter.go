package runner

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/wake"
)

// reporter turns the agent's reports into build log lines, written in small batches so a chatty
// engine does not cost a write per line. A build's log holds at most maxLines lines (0: no
// limit): past them one marker line says so and the rest is dropped, while the build goes on.
// The count lives as long as the build's run, which is its whole life: a build a restart
// interrupted is failed, never continued.
//
// Batches are written strictly in order: one batch at a time, taken and appended under the
// write lock. A batch whose append fails is kept and appended again, as it was, before anything
// newer; the failure goes to the operator log. While writes fail, up to maxWaiting newer lines
// wait; lines past that are lost, counted, and a line in the log says how many once writing
// works again. The build itself goes on: its log is not its product.
type reporter struct {
	logs       LogWriter
	build      *kiln.Build
	now        func() time.Time
	logger     *slog.Logger
	maxLines   int
	maxWaiting int           // 0: defaultMaxWaiting
	closeWait  time.Duration // how long close tries a failing store again; 0: defaultCloseWait

	mu       sync.Mutex // guards the fields below it up to write
	pending  []kiln.LogLine
	last     time.Time
	lines    int  // lines kept so far
	dropping bool // the limit was reached and the marker written
	lost     int  // lines dropped because writes failed and too many waited

	write    sync.Mutex // held while a batch is taken and appended; guards the fields below
	next     int64      // number of the next line to write; 0 until asked from the store
	retry    []kiln.LogLine
	failures int // failed writes in a row
}

// DefaultMaxLogLines is the default limit of a build's log (KILN_LOG_MAX_LINES).
const DefaultMaxLogLines = 200_000

// defaultMaxWaiting is how many lines wait while the log store fails before lines are lost.
const defaultMaxWaiting = 10_000

// defaultCloseWait is how long the build's end waits for its last lines while the log store
// fails (a store that is down for a moment, a host API slow to answer under load): the last
// writes are tried again, a little later each time, before the lines are given up.
const defaultCloseWait = 30 * time.Second

// truncatedMarker is the line that ends a log cut at n lines.
func truncatedMarker(n int) string {
	return fmt.Sprintf("kiln: log truncated after %d lines; the rest of this build's output is dropped", n)
}

// lostMarker is the line that says n lines could not be written.
func lostMarker(n int) string {
	return fmt.Sprintf("kiln: %d log lines were lost because the log could not be written", n)
}

// flushEvery bounds how long a line waits before it is written (and visible to followers).
const flushEvery = 200 * time.Millisecond

func (r *reporter) Stage(ctx context.Context, s buildsteps.Stage) {
	r.add(ctx, kiln.LogLine{Time: r.now(), Level: kiln.LevelInfo, Message: "==> kiln: stage " + string(s)})
}

func (r *reporter) Log(ctx context.Context, l buildsteps.LogLine) {
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
	if len(r.pending) >= r.waitingCap() {
		r.lost++
		r.mu.Unlock()
		return
	}
	r.pending = append(r.pending, l)
	due := len(r.pending)%256 == 0 || time.Since(r.last) >= flushEvery
	r.mu.Unlock()
	if due {
		r.flush(ctx)
	}
}

func (r *reporter) waitingCap() int {
	if r.maxWaiting > 0 {
		return r.maxWaiting
	}
	return defaultMaxWaiting
}

// flush writes the failed batch again, if any, then the lines waiting, in that order; it
// reports whether everything taken was written.
func (r *reporter) flush(ctx context.Context) bool {
	ctx = context.WithoutCancel(ctx)
	r.write.Lock()
	defer r.write.Unlock()
	if r.retry != nil && !r.append(ctx, r.retry) {
		return false
	}
	r.retry = nil
	r.mu.Lock()
	lines := r.pending
	r.pending = nil
	r.last = time.Now()
	if r.lost > 0 {
		// Every line after the waiting ones was lost, so the marker goes last.
		lines = append(lines, kiln.LogLine{Time: r.now(), Level: kiln.LevelWarn, Message: lostMarker(r.lost)})
		r.lost = 0
	}
	r.mu.Unlock()
	if len(lines) == 0 {
		return true
	}
	if !r.append(ctx, lines) {
		r.retry = lines
		return false
	}
	return true
}

// append writes one batch after the lines written so far (the write lock is held).
func (r *reporter) append(ctx context.Context, lines []kiln.LogLine) bool {
	b := r.build
	err := func() error {
		if r.next == 0 {
			last, err := r.logs.Last(ctx, b.OrganizationID, b.ID)
			if err != nil {
				return err
			}
			r.next = last + 1
		}
		return r.logs.Append(ctx, b.OrganizationID, b.ID, r.next, lines...)
	}()
	if err != nil {
		r.failures++
		if r.failures&(r.failures-1) == 0 { // 1st, 2nd, 4th, 8th ... failure in a row
			r.log().ErrorContext(ctx, "build log write failed; the lines are kept and written again",
				slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID),
				slog.Int("failures", r.failures), slog.Int("lines", len(lines)), slog.String("error", err.Error()))
		}
		return false
	}
	if r.failures > 0 {
		r.log().InfoContext(ctx, "build log writes work again", slog.String("build_id", b.ID), slog.Int("failures", r.failures))
		r.failures = 0
	}
	r.next += int64(len(lines))
	return true
}

// close writes what is left, once the build's output has ended; lines that still cannot be
// written are reported in the operator log.
func (r *reporter) close(ctx context.Context) {
	deadline := time.Now().Add(cmp.Or(r.closeWait, defaultCloseWait))
	for wait := 100 * time.Millisecond; !r.flush(ctx); wait = min(2*wait, 2*time.Second) {
		if time.Now().Add(wait).After(deadline) {
			r.giveUp(ctx)
			return
		}
		time.Sleep(wait)
	}
}

// giveUp reports in the operator log the lines that could not be written by the build's end.
func (r *reporter) giveUp(ctx context.Context) {
	r.write.Lock()
	r.mu.Lock()
	n := len(r.retry) + len(r.pending) + r.lost
	r.mu.Unlock()
	r.write.Unlock()
	r.log().ErrorContext(ctx, "build log incomplete: lines could not be written",
		slog.String("build_id", r.build.ID), slog.String("org_id", r.build.OrganizationID), slog.Int("lines", n))
}

func (r *reporter) log() *slog.Logger {
	if r.logger != nil {
		return r.logger
	}
	return slog.Default()
}

// flushPeriodically writes waiting lines every flushEvery, so a quiet engine's last line shows
// soon (and a failed batch is tried again); the returned function stops it.
func (r *reporter) flushPeriodically(ctx context.Context) func() {
	flushing, stopFlushing := context.WithCancel(context.WithoutCancel(ctx)) // flushes go on after ctx ends, until stopped
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		wake.Every(flushing, flushEvery, func(context.Context) bool { r.flush(ctx); return true })
	}()
	return func() { stopFlushing(); <-stopped }
}
