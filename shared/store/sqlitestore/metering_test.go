package sqlitestore_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/storetest"
)

// TestMeteringFailureLeavesTheBuildRunning makes the write of a build's minutes fail (as a crash
// between the two writes would): the build's end is not written either, so the retry that
// follows ends it and counts its minutes exactly once.
func TestMeteringFailureLeavesTheBuildRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kiln.db")
	s := open(t, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(text string) {
		if _, err := db.ExecContext(t.Context(), text); err != nil {
			t.Fatal(err)
		}
	}
	storetest.MeteringFailure(t, s, func(string, string) {
		exec(`CREATE TRIGGER fail_metering BEFORE INSERT ON usage_minutes BEGIN SELECT RAISE(ABORT, 'disk gone'); END`)
	}, func(string, string) {
		exec(`DROP TRIGGER fail_metering`)
	})
}

// TestMigrationMakesEarlierOrganizationsEnterprise: organizations made before plans were enforced
// (all labelled free, none limited) are enterprise after migration 0020, so an upgrade limits
// nobody; their builds have no minutes and their usage is empty.
func TestMigrationMakesEarlierOrganizationsEnterprise(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kiln.db")
	ctx := t.Context()
	earlierDatabase(t, path, "0020", `INSERT INTO organizations (id, name, slug, plan, defaults, github_installation_id, created_at, updated_at)
		VALUES ('A', 'Local', 'local', 'free', '{}', NULL, 1, 2), ('B', 'Hosted', 'hosted', 'pro', '{}', NULL, 1, 2); PRAGMA user_version = 19`)
	s := open(t, path)
	for id, want := range map[string]kiln.Plan{"A": kiln.PlanEnterprise, "B": kiln.PlanPro} {
		org, err := s.GetOrganization(ctx, id)
		if err != nil || org.Plan != want || org.MaxConcurrentBuilds != 0 {
			t.Errorf("organization %s: %+v %v; want plan %s", id, org, err, want)
		}
	}
}
