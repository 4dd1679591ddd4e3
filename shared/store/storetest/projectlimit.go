package storetest

import (
	"fmt"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func listProjectIDs(t *testing.T, s store.Store, orgID string) []string {
	t.Helper()
	return walk(t, 10, func(p store.Page) ([]*kiln.Project, string, error) {
		return s.ListProjects(t.Context(), orgID, store.ProjectFilter{}, p)
	}, projectID, nil)
}

// testProjectLimit checks CreateProject's max: the count and the write are one step, so
// creations at the same moment never exceed it, and a delete frees a place.
func testProjectLimit(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("ConcurrentCreationsStopAtMax", func(t *testing.T) {
		cases := []struct {
			name          string
			max, existing int
			racers        int
			wantCreated   int
		}{
			{"OneOfEightAtMax1", 1, 0, 8, 1},
			{"TwoOfEightAtMax3With1", 3, 1, 8, 2},
			{"NoneAtMax2With2", 2, 2, 8, 0},
			{"AllEightWithoutLimit", 0, 1, 8, 8},
		}
		// A lost race shows only sometimes, so each case races several organizations in turn.
		const rounds = 5
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := open(t)
				for range rounds {
					raceProjects(t, s, c.max, c.existing, c.racers, c.wantCreated)
				}
			})
		}
	})

	t.Run("DeleteFreesAPlace", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		first := newProject(f.org.ID, kiln.SourceGitHub)
		wantOK(t, s.CreateProject(ctx, first, 1), "CreateProject of the first")
		second := newProject(f.org.ID, kiln.SourcePerforce)
		wantCode(t, s.CreateProject(ctx, second, 1), kiln.EPlanLimitReached, "CreateProject at the limit")
		wantCode(t, getProjectErr(t, s, second), kiln.ENotFound, "GetProject of the refused project")
		wantOK(t, s.DeleteProject(ctx, f.org.ID, first.ID), "DeleteProject")
		wantOK(t, s.CreateProject(ctx, second, 1), "CreateProject after the delete")
		wantIDs(t, "projects", listProjectIDs(t, s, f.org.ID), []string{second.ID})
		// Deleting what is not there frees nothing.
		wantCode(t, s.DeleteProject(ctx, f.org.ID, first.ID), kiln.ENotFound, "DeleteProject again")
		wantCode(t, s.CreateProject(ctx, newProject(f.org.ID, kiln.SourceGitHub), 1), kiln.EPlanLimitReached, "CreateProject after a second delete of the same project")
	})

	t.Run("LimitCountsOnlyTheOrganizationsProjects", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		a, b := createOrganization(t, s), createOrganization(t, s)
		createProject(t, s, a.org.ID, kiln.SourceGitHub)
		createProject(t, s, a.org.ID, kiln.SourceGitHub)
		wantOK(t, s.CreateProject(ctx, newProject(b.org.ID, kiln.SourceGitHub), 1), "CreateProject in another organization")
	})

	t.Run("TakenIDAndUnknownOrganization", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		for _, max := range []int{0, 5} {
			t.Run(fmt.Sprintf("max%d", max), func(t *testing.T) {
				wantCode(t, s.CreateProject(ctx, p, max), kiln.EConflict, "CreateProject with a taken id")
				orphan := newProject(kiln.NewID(), kiln.SourceGitHub)
				wantCode(t, s.CreateProject(ctx, orphan, max), kiln.ENotFound, "CreateProject in an unknown organization")
				wantIDs(t, "projects of the unknown organization", listProjectIDs(t, s, orphan.OrganizationID), nil)
			})
		}
		// The refused duplicate took no place: one more fits under max 2.
		wantOK(t, s.CreateProject(ctx, newProject(f.org.ID, kiln.SourceGitHub), 2), "CreateProject after the conflicts")
	})
}

func getProjectErr(t *testing.T, s store.Store, p *kiln.Project) error {
	_, err := s.GetProject(t.Context(), p.OrganizationID, p.ID)
	return err
}

// raceProjects stores existing projects in a new organization, then has racers create one each
// at once with max, and checks that wantCreated of them did and the others got plan_limit_reached.
func raceProjects(t *testing.T, s store.Store, max, existing, racers, wantCreated int) {
	t.Helper()
	ctx := t.Context()
	f := createOrganization(t, s)
	var want []string
	for range existing {
		want = append(want, createProject(t, s, f.org.ID, kiln.SourceGitHub).ID)
	}
	ps := make([]*kiln.Project, racers)
	for i := range ps {
		ps[i] = newProject(f.org.ID, kiln.SourceGitHub)
	}
	errs := race(racers, func(i int) error { return s.CreateProject(ctx, ps[i], max) })
	for i, err := range errs {
		switch {
		case err == nil:
			want = append(want, ps[i].ID)
		case !kiln.IsCode(err, kiln.EPlanLimitReached):
			t.Fatalf("racer %d: got %v, want nil or %s", i, err, kiln.EPlanLimitReached)
		}
	}
	if got := len(want) - existing; got != wantCreated {
		t.Fatalf("%d racers created a project, want %d", got, wantCreated)
	}
	wantIDs(t, "projects", listProjectIDs(t, s, f.org.ID), newestFirst(want))
}
