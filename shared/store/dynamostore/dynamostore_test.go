package dynamostore_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// These tests cover what is particular to the DynamoDB layout; storetest covers the contract.

func newOrg(t *testing.T, s store.Store) string {
	t.Helper()
	at := time.Now().UTC()
	org := &kiln.Organization{ID: kiln.NewID(), Name: "Studio", Plan: kiln.PlanFree, CreatedAt: at, UpdatedAt: at}
	org.Slug = "s-" + org.ID
	if err := s.CreateOrganization(t.Context(), org, nil, nil); err != nil {
		t.Fatal(err)
	}
	return org.ID
}

func newBuild(orgID, projectID string, p kiln.Platform) *kiln.Build {
	return &kiln.Build{
		ID: kiln.NewID(), OrganizationID: orgID, ProjectID: projectID, BuildSettingID: kiln.NewID(),
		Status: kiln.StatusPending, Platform: p, BuildType: kiln.BuildTypeShipping, Branch: "main",
		CreatedAt: time.Now().UTC(),
	}
}

func listIDs(t *testing.T, s store.Store, orgID string, f store.BuildFilter, limit int) []string {
	t.Helper()
	var ids []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		bs, next, err := s.ListBuilds(t.Context(), orgID, f, store.Page{Limit: limit, After: after})
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) > limit || (next != "" && len(bs) != limit) {
			t.Fatalf("page of %d with limit %d and next %q", len(bs), limit, next)
		}
		for _, b := range bs {
			ids = append(ids, b.ID)
		}
		if next == "" {
			return ids
		}
		after = next
	}
}

// A status change moves the build between GSI3 partitions; the condition on the old status holds.
func TestUpdateBuildMovesStatusIndex(t *testing.T) {
	s := newStore(t)
	orgID := newOrg(t, s)
	b := newBuild(orgID, kiln.NewID(), kiln.PlatformLinux)
	if err := s.CreateBuild(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	pending := store.BuildFilter{Status: kiln.StatusPending}
	running := store.BuildFilter{Status: kiln.StatusRunning}
	if got := listIDs(t, s, orgID, pending, 10); !slices.Equal(got, []string{b.ID}) {
		t.Fatalf("pending before: %v", got)
	}
	if err := b.Transition(kiln.StatusRunning, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateBuild(t.Context(), b, kiln.StatusPending, kiln.AllBuildFields); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s, orgID, pending, 10); len(got) != 0 {
		t.Fatalf("pending after: %v", got)
	}
	if got := listIDs(t, s, orgID, running, 10); !slices.Equal(got, []string{b.ID}) {
		t.Fatalf("running after: %v", got)
	}
	if err := s.UpdateBuild(t.Context(), b, kiln.StatusPending, kiln.AllBuildFields); !kiln.IsCode(err, kiln.EInvalidState) {
		t.Fatalf("update from stale status: %v", err)
	}
	missing := newBuild(orgID, kiln.NewID(), kiln.PlatformLinux)
	if err := s.UpdateBuild(t.Context(), missing, kiln.StatusPending, kiln.AllBuildFields); !kiln.IsCode(err, kiln.ENotFound) {
		t.Fatalf("update of a missing build: %v", err)
	}
}

// A selective filter makes the store read several DynamoDB pages per page it returns; the walk
// still returns every match once, newest first, and ends with an empty cursor.
func TestFilteredPagingAcrossQueryPages(t *testing.T) {
	s := newStore(t)
	orgID := newOrg(t, s)
	projectID := kiln.NewID()
	var want []string
	for i := range 130 {
		p := kiln.PlatformWin64
		if i%10 == 3 {
			p = kiln.PlatformLinux
		}
		b := newBuild(orgID, projectID, p)
		if err := s.CreateBuild(t.Context(), b); err != nil {
			t.Fatal(err)
		}
		if p == kiln.PlatformLinux {
			want = append([]string{b.ID}, want...)
		}
	}
	for _, f := range []store.BuildFilter{
		{Platform: kiln.PlatformLinux},                                             // table partition + filter
		{ProjectID: projectID, Platform: kiln.PlatformLinux},                       // GSI1 + filter
		{Status: kiln.StatusPending, Platform: kiln.PlatformLinux, Branch: "main"}, // GSI3 + filters
	} {
		for _, limit := range []int{1, 4, 13, 100} {
			t.Run(fmt.Sprintf("%+v/limit%d", f, limit), func(t *testing.T) {
				if got := listIDs(t, s, orgID, f, limit); !slices.Equal(got, want) {
					t.Fatalf("got %v\nwant %v", got, want)
				}
			})
		}
	}
}

// More settings than one transaction holds are all deleted with their project.
func TestDeleteProjectWithManySettings(t *testing.T) {
	s := newStore(t)
	orgID := newOrg(t, s)
	at := time.Now().UTC()
	p := storefixture.Project(t, s, orgID, at)
	for range 130 {
		storefixture.Setting(t, s, p, at)
	}
	if err := s.DeleteProject(t.Context(), orgID, p.ID); err != nil {
		t.Fatal(err)
	}
	left, err := s.ListBuildSettings(t.Context(), orgID, p.ID)
	if err != nil || len(left) != 0 {
		t.Fatalf("settings left: %d, %v", len(left), err)
	}
	if _, err := s.GetProject(t.Context(), orgID, p.ID); !kiln.IsCode(err, kiln.ENotFound) {
		t.Fatalf("get deleted project: %v", err)
	}
}
