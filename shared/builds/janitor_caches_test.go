package builds

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/nofollow"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// TestJanitorSweepsCachesOfDeletedProjects: a sweep removes the build caches of projects that no
// longer exist and keeps those of projects that do; a store that cannot tell is an error and
// removes nothing.
func TestJanitorSweepsCachesOfDeletedProjects(t *testing.T) {
	ctx := context.Background()
	st := storefixture.SQLite(t)
	arts, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	caches, err := buildcache.New(arts, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	o, _ := storefixture.Org(t, st, "", now)
	org := o.ID
	live := storefixture.Project(t, st, org, now)
	gone := kiln.NewID() // a project deleted while its caches could not be removed
	project, err := nofollow.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer project.Close()
	keys := map[string]buildcache.Key{}
	for _, p := range []string{live.ID, gone} {
		keys[p] = buildcache.Key{Org: org, Project: p, Ref: "main", Platform: "Win64", Engine: "5.4"}
		if _, _, err := caches.Save(ctx, keys[p], kiln.NewID(), project); err != nil {
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
