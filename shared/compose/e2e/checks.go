package e2e

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// checkRunOf returns the check run GitHub holds for a build once it is completed, or as it is
// after 10 seconds (the API shows a build ended a moment before its end is posted).
func (w *World) CheckRunOf(t *testing.T, buildID string) (githubtest.CheckRun, bool) {
	t.Helper()
	var run githubtest.CheckRun
	found := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if w.Service != nil { // kiln serve: its poster's queue; aws-local's Lambdas post synchronously
			w.Service.WaitStatusesPosted()
		}
		for _, c := range w.GitHub.CheckRuns() {
			if c.ExternalID == buildID {
				run, found = c, true
			}
		}
		if run.Status == "completed" {
			break
		}
	}
	return run, found
}
