package e2e

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// statusesOf returns the states GitHub received for a commit, once every queued status was posted.
func (w *World) StatusesOf(t *testing.T, sha string) []githubtest.Status {
	t.Helper()
	w.Service.WaitStatusesPosted()
	var got []githubtest.Status
	for _, s := range w.GitHub.Statuses() {
		if s.SHA == sha {
			got = append(got, s)
		}
	}
	return got
}
