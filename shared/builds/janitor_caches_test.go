package builds

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// TestJanitorSweepsCachesOfDeletedProjects: a sweep removes the build caches of projects that no
// longer exist and keeps those of projects that do; a store that cannot tell is an error and
// removes nothing.
func TestJanitorSweepsCachesOfDeletedProjects(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	arts, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	caches, err := buildcache.New(arts, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	created, err := accounts.CreateOrganization(ctx, st, accounts.NewOrganization{Name: "S", OwnerEmail: "o@s.example", OwnerName: "O"}, now)
	if err != nil {
		t.Fatal(err)
	}
	org := created.Organization.ID
	live := &kiln.Project{ID: kiln.NewID(), OrganizationID: org, Name: "Shooter", SourceControl: kiln.SourceGitHub, RepoLink: "studio/shooter",
		InstallationID: "42", DefaultBranch: "main", UprojectPath: "Shooter.uproject", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateProject(ctx, live, 0); err != nil {
		t.Fatal(err)
	}
	gone := kiln.NewID() // a project deleted while its caches could not be removed
	dir := t.TempDir()
	keys := map[string]buildcache.Key{}
	for _, p := range []string{live.ID, gone} {
		keys[p] = buildcache.Key{Org: org, Project: p, Ref: "main", Platform: "Win64", Engine: "5.4"}
		if _, _, err := caches.Save(ctx, keys[p], kiln.NewID(), dir); err != nil {
			t.Fatal(err)
		}
	}

	failing := &Janitor{Store: st, Artifacts: arts, Caches: caches, Projects: unreachableProjects{}, Retention: time.Hour, Now: func() time.Time { return now }}
	if _, err := failing.Sweep(ctx); err == nil {
		t.Error("a sweep whose project store fails: no error")
	}
	if u, _ := caches.Usage(ctx, org); u.Count != 2 {
		t.Fatalf("caches after a failed sweep: %+v, want both", u)
	}

	j := &Janitor{Store: st, Artifacts: arts, Caches: caches, Projects: st, Retention: time.Hour, Now: func() time.Time { return now }}
	if _, err := j.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := caches.Latest(ctx, keys[gone]); ok {
		t.Error("the deleted project's cache is kept")
	}
	if _, ok, _ := caches.Latest(ctx, keys[live.ID]); !ok {
		t.Error("the live project's cache was removed")
	}
}

// unreachableProjects fails every lookup.
type unreachableProjects struct{}

func (unreachableProjects) GetProject(context.Context, string, string) (*kiln.Project, error) {
	return nil, errors.New("store unreachable")
}
