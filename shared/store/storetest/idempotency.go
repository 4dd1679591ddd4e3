package storetest

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// createOnce calls CreateBuildOnce and fails the test on an error.
func createOnce(t *testing.T, s store.Store, b *kiln.Build, key, fingerprint string) (*kiln.Build, string, bool) {
	t.Helper()
	got, fp, created, err := s.CreateBuildOnce(t.Context(), b, key, fingerprint)
	wantOK(t, err, "CreateBuildOnce")
	return got, fp, created
}

// wantOnce fails the test unless a CreateBuildOnce answer is the given build, fingerprint and
// created flag.
func wantOnce(t *testing.T, what string, got *kiln.Build, fp string, created bool, want *kiln.Build, wantFP string, wantCreated bool) {
	t.Helper()
	if created != wantCreated || fp != wantFP {
		t.Fatalf("%s: created %v with fingerprint %q, want created %v with %q", what, created, fp, wantCreated, wantFP)
	}
	wantEqual(t, what, got, want)
}

func testCreateBuildOnce(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("RepeatReturnsTheFirstBuild", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		first := newBuild(set, kiln.StatusPending)
		got, fp, created := createOnce(t, s, first, "key-1", "fp-a")
		wantOnce(t, "first CreateBuildOnce", got, fp, created, first, "fp-a", true)
		stored, err := s.GetBuild(ctx, f.org.ID, first.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "created build", stored, first)

		// A repeat, with the same request or another, writes nothing and answers with the first
		// build and the fingerprint recorded with it.
		for _, repeatFP := range []string{"fp-a", "fp-b", ""} {
			again := newBuild(set, kiln.StatusPending)
			again.Branch = "other"
			got, fp, created = createOnce(t, s, again, "key-1", repeatFP)
			wantOnce(t, "CreateBuildOnce with a used key, fingerprint "+repeatFP, got, fp, created, first, "fp-a", false)
			_, err := s.GetBuild(ctx, f.org.ID, again.ID)
			wantCode(t, err, kiln.ENotFound, "GetBuild of the build a repeat brought")
		}
		wantIDs(t, "builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{}, 10), []string{first.ID})

		// Another key is another build, even with the same fingerprint.
		second := newBuild(set, kiln.StatusPending)
		got, fp, created = createOnce(t, s, second, "key-2", "fp-a")
		wantOnce(t, "CreateBuildOnce with a new key", got, fp, created, second, "fp-a", true)
		wantIDs(t, "builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{}, 10), newestFirst([]string{first.ID, second.ID}))
	})

	t.Run("KeysOfOrganizationsAreIndependent", func(t *testing.T) {
		s := open(t)
		var firsts []*kiln.Build
		for i := range 2 {
			f, set := createOrganizationSetting(t, s)
			b := newBuild(set, kiln.StatusPending)
			got, fp, created := createOnce(t, s, b, "shared-key", "fp")
			wantOnce(t, "CreateBuildOnce in organization "+string(rune('A'+i)), got, fp, created, b, "fp", true)
			wantIDs(t, "builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{}, 10), []string{b.ID})
			firsts = append(firsts, b)
		}
		for _, first := range firsts {
			again := *first
			again.ID = kiln.NewID()
			got, fp, created := createOnce(t, s, &again, "shared-key", "fp-other")
			wantOnce(t, "repeat in the organization", got, fp, created, first, "fp", false)
		}
	})

	t.Run("EmptyKeyIsBadRequest", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		b := newBuild(set, kiln.StatusPending)
		_, _, _, err := s.CreateBuildOnce(ctx, b, "", "fp")
		wantCode(t, err, kiln.EBadRequest, "CreateBuildOnce with an empty key")
		wantIDs(t, "builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{}, 10), nil)
	})

	t.Run("TakenBuildIDRecordsNoKey", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		existing := createBuild(t, s, set, kiln.StatusRunning)
		clash := newBuild(set, kiln.StatusPending)
		clash.ID = existing.ID
		_, _, _, err := s.CreateBuildOnce(ctx, clash, "key", "fp-clash")
		wantCode(t, err, kiln.EConflict, "CreateBuildOnce with a taken build id")
		got, err := s.GetBuild(ctx, f.org.ID, existing.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "build after the refused create", got, existing)
		// The refused create did not keep the key: it is still free.
		fresh := newBuild(set, kiln.StatusPending)
		b, fp, created := createOnce(t, s, fresh, "key", "fp-fresh")
		wantOnce(t, "CreateBuildOnce after the refused one", b, fp, created, fresh, "fp-fresh", true)
	})
}
