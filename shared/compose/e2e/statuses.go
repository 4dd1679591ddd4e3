package e2e

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// postedUntil waits, up to 10 seconds, until done says what GitHub received is final: a build's
// end reaches GitHub a moment after the API shows it. Before each look, kiln serve's poster has
// posted all it queued (aws-local's Lambdas post synchronously).
func (w *World) postedUntil(done func() bool) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if w.Service != nil {
			w.Service.WaitStatusesPosted()
		}
		if done() || time.Now().After(deadline) {
			return
		}
	}
}

// StatusesOf returns the states GitHub received for the commit of an ended build, once the last
// is final (not pending), or as they are after 10 seconds.
func (w *World) StatusesOf(t *testing.T, sha string) []githubtest.Status {
	t.Helper()
	var got []githubtest.Status
	w.postedUntil(func() bool {
		got = got[:0]
		for _, s := range w.GitHub.Statuses() {
			if s.SHA == sha {
				got = append(got, s)
			}
		}
		return len(got) > 0 && got[len(got)-1].State != "pending"
	})
	return got
}

// CheckRunOf returns the check run GitHub holds for a build once it is completed, or as it is
// after 10 seconds.
func (w *World) CheckRunOf(t *testing.T, buildID string) (githubtest.CheckRun, bool) {
	t.Helper()
	var run githubtest.CheckRun
	found := false
	w.postedUntil(func() bool {
		for _, c := range w.GitHub.CheckRuns() {
			if c.ExternalID == buildID {
				run, found = c, true
			}
		}
		return run.Status == "completed"
	})
	return run, found
}
