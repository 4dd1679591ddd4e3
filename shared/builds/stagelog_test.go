package builds

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// memLog is a build log in memory: the lines appended, in order.
type memLog struct{ lines []kiln.LogLine }

func (m *memLog) Append(_ context.Context, _, _ string, first int64, lines ...kiln.LogLine) error {
	if int(first) == len(m.lines)+1 {
		m.lines = append(m.lines, lines...)
	}
	return nil
}

func (m *memLog) Last(context.Context, string, string) (int64, error) {
	return int64(len(m.lines)), nil
}

// TestStageLogRecordsStages: the stage lines of a running build's log become its stages, at the
// lines' times kept between the build's start and now; a batch sent again, other lines and
// invalid names change nothing; an ended build's lines are still written.
func TestStageLogRecordsStages(t *testing.T) {
	line := func(at time.Time, msg string) kiln.LogLine {
		return kiln.LogLine{Time: at, Level: kiln.LevelInfo, Message: msg}
	}
	type stage struct {
		name       string
		start, end time.Duration // from the build's start; end < 0: still open
	}
	tests := []struct {
		name    string
		status  kiln.BuildStatus
		batches [][]kiln.LogLine // times relative to the build's start (w.now at creation)
		want    []stage
	}{
		{name: "stages in order", status: kiln.StatusRunning, batches: [][]kiln.LogLine{
			{line(at(1), "==> kiln: stage sync"), line(at(2), "Cloning")},
			{line(at(30), "==> kiln: stage compile")},
		}, want: []stage{{"sync", time.Second, 30 * time.Second}, {"compile", 30 * time.Second, -1}}},
		{name: "a batch sent twice", status: kiln.StatusRunning, batches: [][]kiln.LogLine{
			{line(at(1), "==> kiln: stage sync")}, {line(at(1), "==> kiln: stage sync")},
		}, want: []stage{{"sync", time.Second, -1}}},
		{name: "not stage lines", status: kiln.StatusRunning, batches: [][]kiln.LogLine{
			{line(at(1), "==> kiln: stage Sync!"), line(at(1), "kiln: stage sync"), line(at(1), "==> kiln: stage ")},
		}},
		{name: "a host clock behind and ahead", status: kiln.StatusRunning, batches: [][]kiln.LogLine{
			{line(at(-3600), "==> kiln: stage sync"), line(at(3600), "==> kiln: stage cook")},
		}, want: []stage{{"sync", 0, time.Minute}, {"cook", time.Minute, -1}}},
		{name: "an ended build", status: kiln.StatusFailed, batches: [][]kiln.LogLine{
			{line(at(1), "==> kiln: stage sync")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLifecycleWorld(t)
			b := w.build(t, tt.status)
			start := w.now
			if b.StartedAt != nil {
				start = *b.StartedAt
			}
			w.now = start.Add(time.Minute) // when the lines arrive
			logs := &memLog{}
			sl := StageLog{LogWriter: logs, Lifecycle: w.lc}
			sent := 0
			for _, batch := range tt.batches {
				batch = slices.Clone(batch)
				for i := range batch {
					batch[i].Time = start.Add(time.Duration(batch[i].Time.UnixNano()))
				}
				first := int64(len(logs.lines) + 1)
				if slices.Equal(batch, tt.batches[0]) && sent > 0 {
					first = 1
				}
				if err := sl.Append(context.Background(), w.org, b.ID, first, batch...); err != nil {
					t.Fatalf("append: %v", err)
				}
				sent++
			}
			if len(logs.lines) == 0 {
				t.Fatal("the lines were not written")
			}
			got := w.status(t, b.ID).Stages
			if len(got) != len(tt.want) {
				t.Fatalf("stages %+v, want %+v", got, tt.want)
			}
			for i, s := range tt.want {
				g := got[i]
				ended := g.EndedAt != nil
				if g.Name != s.name || !g.StartedAt.Equal(start.Add(s.start)) || ended != (s.end >= 0) || ended && !g.EndedAt.Equal(start.Add(s.end)) {
					t.Errorf("stage %d: %s %v–%v, want %s at +%v, ended at +%v", i, g.Name, g.StartedAt.Sub(start), g.EndedAt, s.name, s.start, s.end)
				}
			}
		})
	}
}

// at is a time s seconds from the zero Unix time: the tests' times relative to a build's start.
func at(s int) time.Time { return time.Unix(0, int64(s)*int64(time.Second)) }
