package buildcache

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestProjects: every project with caches is listed once, whatever the number of its keys and
// caches; objects that name no org and project id are not.
func TestProjects(t *testing.T) {
	ts := newTestCache(t)
	orgA, orgB, p1, p2 := kiln.NewID(), kiln.NewID(), kiln.NewID(), kiln.NewID()
	for _, k := range []Key{
		{Org: orgA, Project: p1, Ref: "main", Platform: "Win64", Engine: "5.4"},
		{Org: orgA, Project: p1, Ref: "dev", Platform: "Win64", Engine: "5.4"},
		{Org: orgA, Project: p2, Ref: "main", Platform: "Linux", Engine: "5.3"},
		{Org: orgB, Project: p1, Ref: "main", Platform: "Win64", Engine: "5.4"},
	} {
		ts.putObject(t, k.Prefix()+kiln.NewID()+objectSuffix, 10, t1)
	}
	ts.putObject(t, "caches/not-an-id/"+p1+"/x/y.tar.zst", 1, t1)
	ts.putObject(t, "caches/"+orgA+"/stray.tar.zst", 1, t1)
	ts.putObject(t, orgA+"/"+kiln.NewID()+".tar.gz", 1, t1) // an artifact, not a cache

	got, err := ts.Projects(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []ProjectRef{{orgA, p1}, {orgA, p2}, {orgB, p1}}
	slices.SortFunc(want, func(a, b ProjectRef) int {
		return cmp.Or(strings.Compare(a.Org, b.Org), strings.Compare(a.Project, b.Project))
	})
	if !slices.Equal(got, want) {
		t.Errorf("Projects = %v, want %v", got, want)
	}
}
