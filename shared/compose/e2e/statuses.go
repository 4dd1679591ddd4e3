package e2e

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// StatusesOf returns the states GitHub received for the commit of an ended build: it waits, up to
// 10 seconds, for the last to be final (not pending: the build's end reaches GitHub a moment
// after the API shows it), then for every queued status to be posted.
func (w *World) StatusesOf(t *testing.T, sha string) []githubtest.Status {
	t.Helper()
	var got []githubtest.Status
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if w.Service != nil { // kiln serve: its poster's queue; aws-local's Lambdas post synchronously
			w.Service.WaitStatusesPosted()
		}
		got = got[:0]
		for _, s := range w.GitHub.Statuses() {
			if s.SHA == sha {
				got = append(got, s)
			}
		}
		if (len(got) > 0 && got[len(got)-1].State != "pending") || time.Now().After(deadline) {
			return got
		}
	}
}
