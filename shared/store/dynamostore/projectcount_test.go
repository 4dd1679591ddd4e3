package dynamostore_test

import (
	"sync"
	"testing"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func testProject(orgID string) *kiln.Project {
	at := time.Now().UTC()
	return &kiln.Project{
		ID: kiln.NewID(), OrganizationID: orgID, Name: "Game", SourceControl: kiln.SourceGitHub,
		RepoLink: "studio/game", InstallationID: "1", CreatedAt: at, UpdatedAt: at,
	}
}

// forgetProjectCount makes the organization look stored before the project count existed.
func forgetProjectCount(t *testing.T, table dynamo.Table, orgID string) {
	t.Helper()
	if err := table.Update("PK", "ORG#"+orgID).Range("SK", "ORG").Remove("projectCount").Run(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func storedProjectCount(t *testing.T, table dynamo.Table, orgID string) *int {
	t.Helper()
	var it struct {
		N *int `dynamo:"projectCount"`
	}
	if err := table.Get("PK", "ORG#"+orgID).Range("SK", dynamo.Equal, "ORG").Consistent(true).One(t.Context(), &it); err != nil {
		t.Fatal(err)
	}
	return it.N
}

func wantProjectCount(t *testing.T, table dynamo.Table, orgID string, want int) {
	t.Helper()
	if got := storedProjectCount(t, table, orgID); got == nil || *got != want {
		t.Fatalf("projectCount = %v, want %d", got, want)
	}
}

// An organization stored before the project count existed gets it counted from its projects, once,
// also when several creations (or a delete) need it at the same moment.
func TestProjectCountOfOlderOrganizations(t *testing.T) {
	t.Run("ConcurrentCreations", func(t *testing.T) {
		s, table := newStoreTable(t)
		orgID := newOrg(t, s)
		for range 3 {
			if err := s.CreateProject(t.Context(), testProject(orgID), 0); err != nil {
				t.Fatal(err)
			}
		}
		wantProjectCount(t, table, orgID, 3)
		forgetProjectCount(t, table, orgID)
		var mu sync.Mutex
		created := 0
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				err := s.CreateProject(t.Context(), testProject(orgID), 4)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case !kiln.IsCode(err, kiln.EPlanLimitReached):
					t.Errorf("CreateProject: %v", err)
				}
			})
		}
		wg.Wait()
		if created != 1 {
			t.Fatalf("%d creations succeeded, want 1", created)
		}
		wantProjectCount(t, table, orgID, 4)
	})

	t.Run("Delete", func(t *testing.T) {
		s, table := newStoreTable(t)
		orgID := newOrg(t, s)
		p, q := testProject(orgID), testProject(orgID)
		for _, pr := range []*kiln.Project{p, q} {
			if err := s.CreateProject(t.Context(), pr, 0); err != nil {
				t.Fatal(err)
			}
		}
		forgetProjectCount(t, table, orgID)
		if err := s.DeleteProject(t.Context(), orgID, p.ID); err != nil {
			t.Fatal(err)
		}
		wantProjectCount(t, table, orgID, 1)
		items, _, err := s.ListProjects(t.Context(), orgID, store.ProjectFilter{}, store.Page{})
		if err != nil || len(items) != 1 || items[0].ID != q.ID {
			t.Fatalf("ListProjects = %v, %v; want only %s", items, err, q.ID)
		}
	})

	t.Run("NewOrganizationStartsAtZero", func(t *testing.T) {
		s, table := newStoreTable(t)
		wantProjectCount(t, table, newOrg(t, s), 0)
	})
}
