package sqlitestore_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestMeteringFailureLeavesTheBuildRunning makes the write of a build's minutes fail (as a crash
// between the two writes would): the build's end is not written either, so the retry that
// follows ends it and counts its minutes exactly once.
func TestMeteringFailureLeavesTheBuildRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kiln.db")
	s, ctx := open(t, path), t.Context()
	org, owner, token := newOrg("Metered")
	if err := s.CreateOrganization(ctx, org, owner, token); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: org.ID, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
		Status: kiln.StatusPending, Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main", CreatedAt: started}
	if err := s.CreateBuild(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := b.Transition(kiln.StatusRunning, started, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateBuild(ctx, b, kiln.StatusPending); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TRIGGER fail_metering BEFORE INSERT ON usage_minutes BEGIN SELECT RAISE(ABORT, 'disk gone'); END`); err != nil {
		t.Fatal(err)
	}
	ended := *b
	if err := ended.Transition(kiln.StatusComplete, started.Add(150*time.Second), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateBuild(ctx, &ended, kiln.StatusRunning); err == nil {
		t.Fatal("UpdateBuild succeeded although its minutes could not be written")
	}
	got, err := s.GetBuild(ctx, org.ID, b.ID)
	if err != nil || got.Status != kiln.StatusRunning || got.BuildMinutes != 0 {
		t.Fatalf("after the failed end: %+v, %v; want still running, no minutes", got, err)
	}
	if _, err := db.ExecContext(ctx, `DROP TRIGGER fail_metering`); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the retry, then a repeat of it
		err = s.UpdateBuild(ctx, &ended, kiln.StatusRunning)
	}
	if !kiln.IsCode(err, kiln.EInvalidState) {
		t.Fatalf("the repeated end: %v, want invalid_state", err)
	}
	u, err := s.GetUsage(ctx, org.ID, "2026-04")
	if err != nil {
		t.Fatal(err)
	}
	if u.Minutes[kiln.PlatformLinux] != 3 || len(u.Minutes) != 1 {
		t.Fatalf("usage of 2026-04: %v, want Linux 3", u.Minutes)
	}
}
