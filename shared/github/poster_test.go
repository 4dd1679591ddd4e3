package github

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// A commit status names the build by its number when it has one.
func TestStatusDescriptionNamesTheBuildNumber(t *testing.T) {
	cases := []struct {
		status kiln.BuildStatus
		reason string
		number int64
		state  string
		want   string
	}{
		{kiln.StatusPending, "", 7, StatePending, "Build #7 is queued"},
		{kiln.StatusRunning, "", 7, StatePending, "Build #7 is running"},
		{kiln.StatusComplete, "", 7, StateSuccess, "Build #7 completed"},
		{kiln.StatusFailed, "cook failed", 7, StateFailure, "Build #7 failed: cook failed"},
		{kiln.StatusFailed, "cancelled", 7, StateError, "Build #7 was cancelled"},
		{kiln.StatusSuperseded, "", 7, StateError, "Build #7 was superseded by a newer one"},
		{kiln.StatusComplete, "", 0, StateSuccess, "The build completed"}, // from before builds were numbered
	}
	p := &StatusPoster{PublicURL: "https://kiln.example"}
	for _, c := range cases {
		b := &kiln.Build{ID: kiln.NewID(), Number: c.number, Status: c.status, FailureReason: c.reason,
			Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping}
		st := p.StatusOf(b)
		if st.State != c.state || st.Description != c.want {
			t.Errorf("%s #%d: %s %q, want %s %q", c.status, c.number, st.State, st.Description, c.state, c.want)
		}
		if st.TargetURL != "https://kiln.example/console/builds/"+b.ID {
			t.Errorf("target URL %q", st.TargetURL)
		}
	}
}
