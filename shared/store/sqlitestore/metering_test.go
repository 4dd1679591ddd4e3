package sqlitestore_test

import (
	"database/sql"
	"os"
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

// TestMigrationMakesEarlierOrganizationsEnterprise: organizations made before plans were enforced
// (all labelled free, none limited) are enterprise after migration 0020, so an upgrade limits
// nobody; their builds have no minutes and their usage is empty.
func TestMigrationMakesEarlierOrganizationsEnterprise(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kiln.db")
	ctx := t.Context()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names { // the schema as it was before 0020
		if filepath.Base(name) >= "0020" {
			break
		}
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(text)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO organizations (id, name, slug, plan, defaults, github_installation_id, created_at, updated_at)
		VALUES ('A', 'Local', 'local', 'free', '{}', NULL, 1, 2), ('B', 'Hosted', 'hosted', 'pro', '{}', NULL, 1, 2); PRAGMA user_version = 19`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := open(t, path)
	for id, want := range map[string]kiln.Plan{"A": kiln.PlanEnterprise, "B": kiln.PlanPro} {
		org, err := s.GetOrganization(ctx, id)
		if err != nil || org.Plan != want || org.MaxConcurrentBuilds != 0 {
			t.Errorf("organization %s: %+v %v; want plan %s", id, org, err, want)
		}
	}
}
