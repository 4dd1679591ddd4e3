package runner

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// memLogs keeps appended lines in memory, numbered like a log store: an append's lines at
// numbers already written are skipped, a gap is refused. fail, when set, is asked before each
// append (numbered from 1) and may fail it, after writing the first `half` lines of it.
type memLogs struct {
	mu    sync.Mutex
	lines []kiln.LogLine
	calls int
	fail  func(call int) (half int, err error)
	yield bool // let other goroutines run before the append takes effect
}

func (m *memLogs) Append(_ context.Context, _, _ string, first int64, lines ...kiln.LogLine) error {
	if m.yield {
		for range 3 {
			runtime.Gosched()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	var err error
	if m.fail != nil {
		var half int
		if half, err = m.fail(m.calls); err != nil {
			lines = lines[:min(half, len(lines))]
		}
	}
	next := int64(len(m.lines)) + 1
	if first > next {
		return fmt.Errorf("gap: first %d, next %d", first, next)
	}
	if skip := next - first; skip < int64(len(lines)) {
		m.lines = append(m.lines, lines[skip:]...)
	}
	return err
}

func (m *memLogs) Last(context.Context, string, string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.lines)), nil
}

func (m *memLogs) messages() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, l := range m.lines {
		out = append(out, l.Message)
	}
	return out
}

func TestReporterCapsTheLog(t *testing.T) {
	cases := []struct {
		name       string
		max, lines int
		wantKept   int
		wantMarker bool
	}{
		{"UnderTheLimit", 5, 4, 4, false},
		{"AtTheLimit", 5, 5, 5, false},
		{"PastTheLimit", 5, 6, 5, true},
		{"FarPastTheLimit", 5, 1000, 5, true},
		{"NoLimit", 0, 1000, 1000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logs := &memLogs{}
			now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
			r := &reporter{logs: logs, build: &kiln.Build{ID: kiln.NewID(), OrganizationID: kiln.NewID()},
				now: func() time.Time { return now }, maxLines: c.max}
			ctx := context.Background()
			for i := range c.lines {
				if i == 1 {
					r.Stage(ctx, buildsteps.StageCook) // stage lines count like the others
					continue
				}
				r.Log(ctx, buildsteps.LogLine{Time: now, Level: buildsteps.LevelInfo, Message: fmt.Sprintf("line %d", i)})
			}
			r.flush(ctx)
			want := c.wantKept
			if c.wantMarker {
				want++
			}
			if len(logs.lines) != want {
				t.Fatalf("%d lines written, want %d", len(logs.lines), want)
			}
			last := logs.lines[len(logs.lines)-1]
			marker := truncatedMarker(c.max)
			if c.wantMarker != (last.Message == marker) {
				t.Fatalf("last line %q; marker wanted: %v", last.Message, c.wantMarker)
			}
			if c.wantMarker && (last.Level != kiln.LevelWarn || marker != "kiln: log truncated after 5 lines; the rest of this build's output is dropped") {
				t.Fatalf("marker %q at level %s", marker, last.Level)
			}
		})
	}
}
