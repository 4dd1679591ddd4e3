package builds

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestLogComplete(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	just, long := now.Add(-time.Second), now.Add(-LogSettle-time.Second)
	for _, tc := range []struct {
		name     string
		status   kiln.BuildStatus
		finished *time.Time
		last     string
		want     bool
	}{
		{"running", kiln.StatusRunning, nil, "kiln: build failed: x", false},
		{"pending", kiln.StatusPending, nil, "", false},
		{"complete", kiln.StatusComplete, &just, "Stored the artifact", true},
		{"failed with its end line", kiln.StatusFailed, &just, "kiln: build failed: cancelled", true},
		{"superseded with its end line", kiln.StatusSuperseded, &just, "kiln: build superseded: a newer build", true},
		{"cancelled, the runner still stopping", kiln.StatusFailed, &just, "LogCook: Display: cooking", false},
		{"cancelled long ago without an end line", kiln.StatusFailed, &long, "LogCook: Display: cooking", true},
		{"no line at all, just ended", kiln.StatusSuperseded, &just, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &kiln.Build{Status: tc.status, FinishedAt: tc.finished}
			if got := LogComplete(b, tc.last, now); got != tc.want {
				t.Errorf("LogComplete = %v, want %v", got, tc.want)
			}
		})
	}
}
