package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func newTestReporter(logs LogWriter, logger *slog.Logger) *reporter {
	return &reporter{logs: logs, build: &kiln.Build{ID: kiln.NewID(), OrganizationID: kiln.NewID()},
		now: func() time.Time { return time.Unix(0, 0) }, logger: logger, closeWait: time.Millisecond}
}

func numbered(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("line %d", i))
	}
	return out
}

// Flushes from the engine's output, the periodic flusher and the end of the build race; the log
// still holds every line once, in the order it was printed.
func TestReporterWritesBatchesInOrder(t *testing.T) {
	logs := &memLogs{yield: true} // widens the window between taking a batch and appending it
	r := newTestReporter(logs, nil)
	ctx := context.Background()
	const total = 5000
	var done atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				r.flush(ctx)
				runtime.Gosched()
			}
		}()
	}
	for i := 1; i <= total; i++ {
		r.Log(ctx, buildsteps.LogLine{Time: time.Unix(0, 0), Level: buildsteps.LevelInfo, Message: fmt.Sprintf("line %d", i)})
		runtime.Gosched() // let the flushers take small batches
	}
	done.Store(true)
	wg.Wait()
	r.close(ctx)
	if got := logs.messages(); !slices.Equal(got, numbered(1, total)) {
		first := 0
		for first < min(len(got), total) && got[first] == fmt.Sprintf("line %d", first+1) {
			first++
		}
		t.Fatalf("%d lines written; first out of place at %d: %v", len(got), first, got[first:min(first+3, len(got))])
	}
}

// A failed append is kept and written again before newer lines, each line once even when the
// store wrote part of the batch before failing, and the failure is in the operator log.
func TestReporterKeepsAFailedBatch(t *testing.T) {
	logs := &memLogs{fail: func(call int) (int, error) {
		switch call {
		case 1:
			return 2, errors.New("disk full") // two lines written, then the error
		case 2, 3:
			return 0, errors.New("disk full")
		}
		return 0, nil
	}}
	var ops bytes.Buffer
	r := newTestReporter(logs, slog.New(slog.NewTextHandler(&ops, nil)))
	ctx := context.Background()
	for i := 1; i <= 10; i++ {
		r.Log(ctx, buildsteps.LogLine{Time: time.Unix(0, 0), Level: buildsteps.LevelInfo, Message: fmt.Sprintf("line %d", i)})
		if i%3 == 0 {
			r.flush(ctx)
		}
	}
	r.close(ctx)
	if got := logs.messages(); !slices.Equal(got, numbered(1, 10)) {
		t.Fatalf("log %v", got)
	}
	out := ops.String()
	if !strings.Contains(out, "build log write failed") || !strings.Contains(out, "disk full") ||
		!strings.Contains(out, "build_id="+r.build.ID) || !strings.Contains(out, "build log writes work again") {
		t.Fatalf("operator log:\n%s", out)
	}
	if strings.Contains(out, "incomplete") {
		t.Fatalf("a log written in the end was reported incomplete:\n%s", out)
	}
}

// While the store fails, lines past the waiting limit are lost: the operator log says how many
// lines a finished build could not write, and once writing works the log says how many were lost.
func TestReporterSaysWhatWasLost(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	logs := &memLogs{fail: func(int) (int, error) {
		if broken.Load() {
			return 0, errors.New("table unavailable")
		}
		return 0, nil
	}}
	var ops bytes.Buffer
	r := newTestReporter(logs, slog.New(slog.NewTextHandler(&ops, nil)))
	r.maxWaiting = 5
	ctx := context.Background()
	for i := 1; i <= 12; i++ {
		r.Log(ctx, buildsteps.LogLine{Time: time.Unix(0, 0), Level: buildsteps.LevelInfo, Message: fmt.Sprintf("line %d", i)})
	}
	r.close(ctx)
	if !strings.Contains(ops.String(), "build log incomplete") || !strings.Contains(ops.String(), "lines=12") {
		t.Fatalf("operator log:\n%s", ops.String())
	}
	broken.Store(false)
	r.close(ctx)
	want := append(numbered(1, 6), lostMarker(6))
	if got := logs.messages(); !slices.Equal(got, want) {
		t.Fatalf("log %q, want %q", got, want)
	}
}

// A store that fails for a moment as the build ends loses nothing: close tries the last lines
// again until they are written, and reports nothing incomplete.
func TestReporterCloseWaitsOutAMomentaryFailure(t *testing.T) {
	logs := &memLogs{fail: func(call int) (int, error) {
		if call <= 3 {
			return 0, errors.New("throttled")
		}
		return 0, nil
	}}
	var ops bytes.Buffer
	r := newTestReporter(logs, slog.New(slog.NewTextHandler(&ops, nil)))
	r.closeWait = 10 * time.Second
	ctx := context.Background()
	for i := 1; i <= 4; i++ {
		r.Log(ctx, buildsteps.LogLine{Time: time.Unix(0, 0), Level: buildsteps.LevelInfo, Message: fmt.Sprintf("line %d", i)})
	}
	r.close(ctx)
	if got, want := logs.messages(), numbered(1, 4); !slices.Equal(got, want) {
		t.Fatalf("log %q, want %q", got, want)
	}
	if strings.Contains(ops.String(), "incomplete") {
		t.Fatalf("operator log:\n%s", ops.String())
	}
}
