package dynamostore_test

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestMeteringFailureLeavesTheBuildRunning makes the update of the usage item fail (its minutes
// attribute holds a string, so ADD is refused): the transaction writes nothing, the build stays
// running, and once the item is repaired the end is written and counted exactly once.
func TestMeteringFailureLeavesTheBuildRunning(t *testing.T) {
	s, table := newStoreTable(t)
	ctx := t.Context()
	orgID := newOrg(t, s)
	b := newBuild(orgID, kiln.NewID(), kiln.PlatformLinux)
	if err := s.CreateBuild(ctx, b); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	if err := b.Transition(kiln.StatusRunning, started, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateBuild(ctx, b, kiln.StatusPending); err != nil {
		t.Fatal(err)
	}
	usage := map[string]any{"PK": "ORG#" + orgID, "SK": "USAGE#2026-04", "type": "usage", "minutes_Linux": "not a number"}
	if err := table.Put(usage).Run(ctx); err != nil {
		t.Fatal(err)
	}
	ended := *b
	if err := ended.Transition(kiln.StatusComplete, started.Add(150*time.Second), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateBuild(ctx, &ended, kiln.StatusRunning); err == nil {
		t.Fatal("UpdateBuild succeeded although its minutes could not be written")
	}
	got, err := s.GetBuild(ctx, orgID, b.ID)
	if err != nil || got.Status != kiln.StatusRunning || got.BuildMinutes != 0 {
		t.Fatalf("after the failed end: %+v, %v; want still running, no minutes", got, err)
	}
	if err := table.Delete("PK", "ORG#"+orgID).Range("SK", "USAGE#2026-04").Run(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the retry, then a repeat of it
		err = s.UpdateBuild(ctx, &ended, kiln.StatusRunning)
	}
	if !kiln.IsCode(err, kiln.EInvalidState) {
		t.Fatalf("the repeated end: %v, want invalid_state", err)
	}
	u, err := s.GetUsage(ctx, orgID, "2026-04")
	if err != nil {
		t.Fatal(err)
	}
	if u.Minutes[kiln.PlatformLinux] != 3 || len(u.Minutes) != 1 {
		t.Fatalf("usage of 2026-04: %v, want Linux 3", u.Minutes)
	}
}
