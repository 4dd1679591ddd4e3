package builds

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestEstimateProgress: the time left of a running build from its setting's complete builds: by
// stage when they recorded stages, by the median total otherwise; none without history; an
// overrun has no time left and stays at 99%.
func TestEstimateProgress(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	min := func(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }
	// done is a complete build of total minutes, with stages of the given minutes in order.
	done := func(total float64, stages ...any) *kiln.Build {
		start, end := t0, t0.Add(min(total))
		b := &kiln.Build{ID: kiln.NewID(), Status: kiln.StatusComplete, StartedAt: &start, FinishedAt: &end}
		at := start
		for i := 0; i+1 < len(stages); i += 2 {
			e := at.Add(min(stages[i+1].(float64)))
			b.Stages = append(b.Stages, kiln.BuildStage{Name: stages[i].(string), StartedAt: at, EndedAt: &e})
			at = e
		}
		return b
	}
	// running started elapsed minutes ago, in stage cur for inStage minutes.
	running := func(elapsed float64, cur string, inStage float64) *kiln.Build {
		start := t0
		b := &kiln.Build{ID: kiln.NewID(), Status: kiln.StatusRunning, StartedAt: &start}
		if cur != "" {
			b.Stages = []kiln.BuildStage{{Name: cur, StartedAt: t0.Add(min(elapsed - inStage))}}
		}
		return b
	}
	now := func(elapsed float64) time.Time { return t0.Add(min(elapsed)) }
	tests := []struct {
		name    string
		b       *kiln.Build
		history []*kiln.Build
		at      time.Time
		want    *Estimate
	}{
		{name: "no history", b: running(1, "sync", 1), at: now(1)},
		{name: "only failed builds", b: running(1, "", 0), history: []*kiln.Build{{ID: "x", Status: kiln.StatusFailed}}, at: now(1)},
		{name: "not running", b: done(10), history: []*kiln.Build{done(10)}, at: now(1)},
		{name: "median total without stages", b: running(4, "", 0), history: []*kiln.Build{done(10), done(12), done(30)}, at: now(4),
			want: &Estimate{Percent: 33, Elapsed: min(4), Remaining: min(8), BasedOn: 3}},
		{name: "median of an even count", b: running(1, "", 0), history: []*kiln.Build{done(10), done(12)}, at: now(1),
			want: &Estimate{Percent: 9, Elapsed: min(1), Remaining: min(10), BasedOn: 2}},
		{name: "by stage", b: running(5, "compile", 3), at: now(5), history: []*kiln.Build{
			done(20, "sync", 2.0, "compile", 8.0, "cook", 10.0),
			done(20, "sync", 2.0, "compile", 6.0, "cook", 12.0),
			done(20, "sync", 2.0, "compile", 7.0, "cook", 11.0),
		}, want: &Estimate{Stage: "compile", Percent: 25, Elapsed: min(5), Remaining: min(4 + 11), BasedOn: 3}},
		{name: "a stage past its time counts nothing of it", b: running(15, "compile", 13), at: now(15), history: []*kiln.Build{
			done(20, "sync", 2.0, "compile", 8.0, "cook", 10.0),
		}, want: &Estimate{Stage: "compile", Percent: 60, Elapsed: min(15), Remaining: min(10), BasedOn: 1}},
		{name: "overrun", b: running(25, "", 0), history: []*kiln.Build{done(20)}, at: now(25),
			want: &Estimate{Percent: 99, Elapsed: min(25), Overrun: true, BasedOn: 1}},
		{name: "overrun with stages still to come", b: running(21, "compile", 19), at: now(21), history: []*kiln.Build{
			done(20, "sync", 2.0, "compile", 8.0, "cook", 10.0),
		}, want: &Estimate{Stage: "compile", Percent: 99, Elapsed: min(21), Overrun: true, BasedOn: 1}},
		{name: "overrun in the last stage", b: running(25, "cook", 15), at: now(25), history: []*kiln.Build{
			done(20, "sync", 2.0, "compile", 8.0, "cook", 10.0),
		}, want: &Estimate{Stage: "cook", Percent: 99, Elapsed: min(25), Overrun: true, BasedOn: 1}},
		{name: "at most five builds", b: running(1, "", 0), at: now(1), history: []*kiln.Build{
			done(10), done(10), done(10), done(10), done(10), done(100), done(100), done(100), done(100),
		}, want: &Estimate{Percent: 10, Elapsed: min(1), Remaining: min(9), BasedOn: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EstimateProgress(tt.b, tt.history, tt.at)
			switch {
			case got == nil && tt.want == nil:
			case got == nil || tt.want == nil:
				t.Fatalf("got %+v, want %+v", got, tt.want)
			case *got != *tt.want:
				t.Errorf("got %+v, want %+v", *got, *tt.want)
			}
			if got != nil && got.Remaining < 0 {
				t.Errorf("negative time left: %v", got.Remaining)
			}
		})
	}
}
