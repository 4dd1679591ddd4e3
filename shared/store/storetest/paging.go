package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// pagedList is one list of the store, set up in a fresh organization.
type pagedList struct {
	name string
	// start returns a function that adds one item to the list (giving its id), the ids the list
	// already holds, and the list itself.
	start func(t *testing.T, s store.Store) (add func() string, existing []string, list lister[string])
}

// idsOf turns a list of items into a list of their ids.
func idsOf[T any](l lister[T], id func(T) string) lister[string] {
	return func(p store.Page) ([]string, string, error) {
		items, next, err := l(p)
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = id(it)
		}
		return out, next, err
	}
}

// buildList is a build list under filter fl of one setting's builds; every added build matches.
func buildList(name string, fl func(*kiln.BuildSetting) store.BuildFilter) pagedList {
	return pagedList{name, func(t *testing.T, s store.Store) (func() string, []string, lister[string]) {
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		set, other := createSetting(t, s, p), createSetting(t, s, p)
		other.Platform, other.Branch = kiln.PlatformWin64, "dev"
		add := func() string {
			createBuild(t, s, other, kiln.StatusRunning) // noise for the filtered lists
			return createBuild(t, s, set, kiln.StatusPending).ID
		}
		filter := fl(set)
		if filter == (store.BuildFilter{}) {
			add = func() string { return createBuild(t, s, set, kiln.StatusPending).ID }
		}
		return add, nil, idsOf(func(pg store.Page) ([]*kiln.Build, string, error) {
			return s.ListBuilds(t.Context(), f.org.ID, filter, pg)
		}, buildID)
	}}
}

// artifactList is an artifact list of one project under filter fl; every added artifact matches,
// and each comes with one that does not (another project's, or one the filter leaves out).
func artifactList(name string, fl store.ArtifactFilter) pagedList {
	return pagedList{name, func(t *testing.T, s store.Store) (func() string, []string, lister[string]) {
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		set := createSetting(t, s, p)
		noise := createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub))
		branch, commit := "main", "abc123"
		if fl.Branch != "" {
			branch, commit = fl.Branch, fl.Commit
		}
		add := func() string {
			createArtifact(t, s, noise, branch, commit)
			if fl.Branch != "" {
				createArtifact(t, s, set, branch, "other-commit")
			}
			return createArtifact(t, s, set, branch, commit).BuildID
		}
		return add, nil, idsOf(func(pg store.Page) ([]*kiln.Artifact, string, error) {
			return s.ListArtifacts(t.Context(), f.org.ID, p.ID, fl, pg)
		}, artifactID)
	}}
}

var pagedLists = []pagedList{
	{"Members", func(t *testing.T, s store.Store) (func() string, []string, lister[string]) {
		f := createOrganization(t, s)
		add := func() string {
			m := newMember(f.org.ID, "m-"+kiln.NewID()+"@example.com", kiln.RoleMember)
			wantOK(t, s.CreateMember(t.Context(), m, newToken(f.org.ID, m.User.ID)), "CreateMember")
			return m.User.ID
		}
		return add, []string{f.owner.User.ID}, idsOf(func(p store.Page) ([]*kiln.Member, string, error) {
			return s.ListMembers(t.Context(), f.org.ID, p)
		}, memberID)
	}},
	{"Tokens", func(t *testing.T, s store.Store) (func() string, []string, lister[string]) {
		f := createOrganization(t, s)
		add := func() string {
			tk := newToken(f.org.ID, f.owner.User.ID)
			wantOK(t, s.CreateToken(t.Context(), tk), "CreateToken")
			return tk.ID
		}
		return add, []string{f.token.ID}, idsOf(func(p store.Page) ([]*kiln.Token, string, error) {
			return s.ListTokens(t.Context(), f.org.ID, f.owner.User.ID, p)
		}, tokenID)
	}},
	{"Projects", func(t *testing.T, s store.Store) (func() string, []string, lister[string]) {
		f := createOrganization(t, s)
		add := func() string { return createProject(t, s, f.org.ID, kiln.SourceGitHub).ID }
		return add, nil, idsOf(func(p store.Page) ([]*kiln.Project, string, error) {
			return s.ListProjects(t.Context(), f.org.ID, store.ProjectFilter{}, p)
		}, projectID)
	}},
	{"ProjectsBySourceControl", func(t *testing.T, s store.Store) (func() string, []string, lister[string]) {
		f := createOrganization(t, s)
		add := func() string {
			createProject(t, s, f.org.ID, kiln.SourceGitHub)
			return createProject(t, s, f.org.ID, kiln.SourcePerforce).ID
		}
		return add, nil, idsOf(func(p store.Page) ([]*kiln.Project, string, error) {
			return s.ListProjects(t.Context(), f.org.ID, store.ProjectFilter{SourceControl: kiln.SourcePerforce}, p)
		}, projectID)
	}},
	buildList("Builds", func(*kiln.BuildSetting) store.BuildFilter { return store.BuildFilter{} }),
	buildList("BuildsByProject", func(set *kiln.BuildSetting) store.BuildFilter {
		return store.BuildFilter{ProjectID: set.ProjectID, Branch: set.Branch}
	}),
	buildList("BuildsBySetting", func(set *kiln.BuildSetting) store.BuildFilter {
		return store.BuildFilter{BuildSettingID: set.ID}
	}),
	buildList("BuildsByStatus", func(*kiln.BuildSetting) store.BuildFilter {
		return store.BuildFilter{Status: kiln.StatusPending}
	}),
	buildList("BuildsByPlatformAndBranch", func(set *kiln.BuildSetting) store.BuildFilter {
		return store.BuildFilter{Platform: set.Platform, Branch: set.Branch}
	}),
	artifactList("Artifacts", store.ArtifactFilter{}),
	artifactList("ArtifactsByBranchAndCommit", store.ArtifactFilter{Branch: "release/2.0", Commit: "feed42"}),
	webhookDeliveryList,
	triggerTokenList,
	agentList,
}

func testPaging(t *testing.T, open func(t *testing.T) store.Store) {
	for _, l := range pagedLists {
		t.Run(l.name, func(t *testing.T) {
			t.Run("WalkEveryPage", func(t *testing.T) {
				add, ids, list := l.start(t, open(t))
				for range 7 {
					ids = append(ids, add())
				}
				want := newestFirst(ids)
				for _, limit := range []int{1, 2, 3, len(want) - 1, len(want), len(want) + 1, store.MaxLimit} {
					pages := 0
					counted := func(p store.Page) ([]string, string, error) {
						items, next, err := list(p)
						if err == nil && next != "" {
							if len(items) != limit {
								t.Fatalf("limit %d: a page that is not the last has %d items", limit, len(items))
							}
							if next != items[len(items)-1] {
								t.Fatalf("limit %d: next %q is not the page's last id %q", limit, next, items[len(items)-1])
							}
						}
						pages++
						return items, next, err
					}
					got := walk(t, limit, counted, func(s string) string { return s }, nil)
					wantIDs(t, fmt.Sprintf("walk with limit %d", limit), got, want)
					if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
						t.Fatalf("limit %d: %d pages, want %d", limit, pages, wantPages)
					}
				}
			})

			t.Run("InsertsBetweenPages", func(t *testing.T) {
				add, ids, list := l.start(t, open(t))
				for range 6 {
					ids = append(ids, add())
				}
				var added []string
				got := walk(t, 2, list, func(s string) string { return s }, func() { added = append(added, add()) })
				got = slices.DeleteFunc(got, func(id string) bool { return slices.Contains(added, id) })
				wantIDs(t, "originals while inserting between pages", got, newestFirst(ids))
			})
		})
	}

	t.Run("MaxLimit", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		for range store.MaxLimit + 1 {
			createBuild(t, s, set, kiln.StatusPending)
		}
		items, next, err := s.ListBuilds(ctx, f.org.ID, store.BuildFilter{}, store.Page{Limit: store.MaxLimit})
		wantOK(t, err, "ListBuilds")
		if len(items) != store.MaxLimit || next == "" {
			t.Fatalf("ListBuilds with limit %d of %d builds: %d items, next %q", store.MaxLimit, store.MaxLimit+1, len(items), next)
		}
		items, next, err = s.ListBuilds(ctx, f.org.ID, store.BuildFilter{}, store.Page{Limit: store.MaxLimit, After: next})
		wantOK(t, err, "ListBuilds second page")
		if len(items) != 1 || next != "" {
			t.Fatalf("second page: %d items, next %q; want 1 item and no next", len(items), next)
		}
	})
}
