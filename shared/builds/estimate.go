package builds

import (
	"slices"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// EstimateHistory is how many of a setting's latest complete builds an estimate is based on.
const EstimateHistory = 5

// Estimate is how far a running build is, judged from its setting's latest complete builds.
type Estimate struct {
	// Stage is the stage the build is in ("" before its first).
	Stage string
	// Percent is 0 to 99 while the build runs (100 is for a build that ended).
	Percent int
	// Elapsed is the time since the build started.
	Elapsed time.Duration
	// Remaining is the time the build is expected to take still; unknown (Overrun) once the
	// build runs past what its history expects.
	Remaining time.Duration
	Overrun   bool
	// BasedOn counts the builds the estimate is based on.
	BasedOn int
}

// EstimateProgress estimates how far running build b is from history, the latest complete builds
// of its setting (newest first; others are skipped). Without a started, running build, or without
// history, there is no estimate (nil).
//
// The expected total is the median duration of the history. When the history recorded stages,
// the time left is what is expected of the current stage (its median, less the time spent in it,
// at least nothing) plus the medians of the stages that follow it in the newest build that had
// it; otherwise it is the expected total less the elapsed time. A build that ran longer than the
// expected total overruns: its time left is unknown and its percent stays at 99.
func EstimateProgress(b *kiln.Build, history []*kiln.Build, now time.Time) *Estimate {
	if b.Status != kiln.StatusRunning || b.StartedAt == nil {
		return nil
	}
	var totals []time.Duration
	var done []*kiln.Build
	for _, h := range history {
		if d := h.DurationMs(); h.Status == kiln.StatusComplete && d != nil && h.ID != b.ID {
			totals = append(totals, time.Duration(*d)*time.Millisecond)
			done = append(done, h)
		}
		if len(done) == EstimateHistory {
			break
		}
	}
	if len(done) == 0 {
		return nil
	}
	e := &Estimate{Stage: b.CurrentStage(), Elapsed: max(0, now.Sub(*b.StartedAt)), BasedOn: len(done)}
	remaining := median(totals) - e.Elapsed
	if left, ok := stagesLeft(b, done, now); ok && remaining > 0 {
		remaining = left
	}
	if remaining <= 0 {
		e.Overrun, e.Percent = true, 99
		return e
	}
	e.Remaining = remaining
	e.Percent = min(99, int(100*e.Elapsed/(e.Elapsed+remaining)))
	return e
}

// stagesLeft is the time b's current stage and the stages after it are expected to take, from
// the stages done recorded; ok is false when they recorded none of b's current stage.
func stagesLeft(b *kiln.Build, done []*kiln.Build, now time.Time) (time.Duration, bool) {
	cur := b.CurrentStage()
	if cur == "" {
		return 0, false
	}
	var order []string // the stages after cur, in the newest build that went through it
	for _, h := range done {
		if i := slices.IndexFunc(h.Stages, func(s kiln.BuildStage) bool { return s.Name == cur }); i >= 0 {
			for _, s := range h.Stages[i+1:] {
				order = append(order, s.Name)
			}
			break
		}
	}
	expect, ok := stageMedian(done, cur)
	if !ok {
		return 0, false
	}
	in := now.Sub(b.Stages[len(b.Stages)-1].StartedAt)
	left := max(0, expect-in)
	for _, name := range order {
		if d, ok := stageMedian(done, name); ok {
			left += d
		}
	}
	return left, true
}

// stageMedian is the median time the builds spent in stage name, ok false when none ended it.
func stageMedian(bs []*kiln.Build, name string) (time.Duration, bool) {
	var ds []time.Duration
	for _, b := range bs {
		for _, s := range b.Stages {
			if s.Name == name && s.EndedAt != nil {
				ds = append(ds, s.EndedAt.Sub(s.StartedAt))
				break
			}
		}
	}
	if len(ds) == 0 {
		return 0, false
	}
	return median(ds), true
}

// median of ds (not empty): the middle one, or the mean of the two middle ones.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
