package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// wantNumber fails the test unless the build, as returned and as stored, has number want.
func wantNumber(t *testing.T, s store.Store, b *kiln.Build, want int64, what string) {
	t.Helper()
	if b.Number != want {
		t.Errorf("%s: number %d, want %d", what, b.Number, want)
	}
	got, err := s.GetBuild(t.Context(), b.OrganizationID, b.ID)
	wantOK(t, err, what+": GetBuild")
	if got.Number != want {
		t.Errorf("%s: stored number %d, want %d", what, got.Number, want)
	}
}

func testBuildNumbers(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CountPerProject", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		a := createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub))
		b := createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub))
		steps := []struct {
			what string
			set  *kiln.BuildSetting
			key  string // CreateBuildOnce with this key when set
			want int64
		}{
			{"first of A", a, "", 1},
			{"second of A", a, "", 2},
			{"first of B", b, "", 1},
			{"A under a key", a, "key-1", 3},
			{"A again", a, "", 4},
			{"second of B", b, "key-2", 2},
		}
		for _, st := range steps {
			bld := newBuild(st.set, kiln.StatusPending)
			bld.Number = 99 // the store's number wins
			if st.key == "" {
				wantOK(t, s.CreateBuild(ctx, bld), st.what)
			} else {
				_, _, created, err := s.CreateBuildOnce(ctx, bld, st.key, "fp")
				wantOK(t, err, st.what)
				wantEqual(t, st.what+": created", created, true)
			}
			wantNumber(t, s, bld, st.want, st.what)
		}
		// A repeat of a request returns its build, number and all, and takes no number.
		got, _, created, err := s.CreateBuildOnce(ctx, newBuild(a, kiln.StatusPending), "key-1", "fp")
		wantOK(t, err, "repeat of key-1")
		wantEqual(t, "repeat created", created, false)
		wantEqual(t, "repeat's number", got.Number, int64(3))
		next := createBuild(t, s, a, kiln.StatusPending)
		wantNumber(t, s, next, 5, "A after the repeat")
		listed, _, err := s.ListBuilds(ctx, f.org.ID, store.BuildFilter{ProjectID: a.ProjectID}, store.Page{Limit: 1})
		wantOK(t, err, "ListBuilds")
		if len(listed) != 1 || listed[0].Number == 0 {
			t.Errorf("listed builds carry no number: %+v", listed)
		}
	})

	t.Run("ProjectNotStored", func(t *testing.T) {
		s := open(t)
		f := createOrganization(t, s)
		set := newSetting(newProject(f.org.ID, kiln.SourceGitHub)) // neither is stored
		bld := newBuild(set, kiln.StatusPending)
		bld.Number = 7
		wantOK(t, s.CreateBuild(t.Context(), bld), "CreateBuild")
		wantNumber(t, s, bld, 0, "build of a project not stored")
	})

	t.Run("ConcurrentTriggersNeverShareANumber", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		const n = 30
		builds := newPendingBuilds(set, n)
		errs := race(n, func(i int) error {
			if i%2 == 0 {
				return s.CreateBuild(ctx, builds[i])
			}
			_, _, _, err := s.CreateBuildOnce(ctx, builds[i], fmt.Sprintf("key-%d", i), "fp")
			return err
		})
		var numbers []int64
		for i, err := range errs {
			wantOK(t, err, fmt.Sprintf("trigger %d", i))
			got, err := s.GetBuild(ctx, f.org.ID, builds[i].ID)
			wantOK(t, err, "GetBuild")
			wantEqual(t, fmt.Sprintf("trigger %d: stored number", i), got.Number, builds[i].Number)
			numbers = append(numbers, got.Number)
		}
		slices.Sort(numbers)
		for i, got := range numbers { // every put succeeded, so no number was skipped
			if got != int64(i+1) {
				t.Fatalf("numbers %v, want 1 to %d each once", numbers, n)
			}
		}
	})
}
