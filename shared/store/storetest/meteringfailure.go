package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// MeteringFailure checks a store's end of a build when the write of its minutes fails:
// breakMetering makes the write of the organization's minutes of month fail, until repair undoes
// it. The end must not be written either (the build stays running, without minutes), so the retry
// after the repair ends it and counts its minutes exactly once, and a repeat is invalid_state.
// How to make the write fail is the store's own business, so each store's tests call this.
func MeteringFailure(t *testing.T, s store.Store, breakMetering, repair func(orgID, month string)) {
	ctx := t.Context()
	f, set := createOrganizationSetting(t, s)
	started := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	b := runningBuild(t, s, set, kiln.PlatformLinux, started)
	const month = "2026-04" // the build ends in it
	breakMetering(f.org.ID, month)
	ended := *b
	wantOK(t, ended.Transition(kiln.StatusComplete, started.Add(150*time.Second), ""), "Transition to complete")
	if err := s.UpdateBuild(ctx, &ended, kiln.StatusRunning, kiln.AllBuildFields); err == nil {
		t.Fatal("UpdateBuild succeeded although its minutes could not be written")
	}
	got, err := s.GetBuild(ctx, f.org.ID, b.ID)
	if err != nil || got.Status != kiln.StatusRunning || got.BuildMinutes != 0 {
		t.Fatalf("after the failed end: %+v, %v; want still running, no minutes", got, err)
	}
	repair(f.org.ID, month)
	for range 2 { // the retry, then a repeat of it
		err = s.UpdateBuild(ctx, &ended, kiln.StatusRunning, kiln.AllBuildFields)
	}
	wantCode(t, err, kiln.EInvalidState, "the repeated end")
	wantUsage(t, s, f.org.ID, month, map[kiln.Platform]int64{kiln.PlatformLinux: 3}, nil)
}
