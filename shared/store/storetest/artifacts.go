package storetest

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// newArtifact builds (without storing) the artifact of build b.
func newArtifact(b *kiln.Build) *kiln.Artifact {
	sum := md5.Sum([]byte(b.ID))
	return &kiln.Artifact{
		BuildID:        b.ID,
		OrganizationID: b.OrganizationID,
		ProjectID:      b.ProjectID,
		BuildSettingID: b.BuildSettingID,
		Platform:       b.Platform,
		BuildType:      b.BuildType,
		UEVersion:      b.UEVersion,
		Branch:         b.Branch,
		Commit:         b.Commit,
		Key:            "orgs/" + b.OrganizationID + "/builds/" + b.ID + ".tar.gz",
		SizeBytes:      5<<30 + 12345, // more than 32 bits hold
		ChecksumMD5:    hex.EncodeToString(sum[:]),
		CreatedAt:      now(),
	}
}

// createArtifact stores the artifact of a new (unstored) build of set on branch and commit.
func createArtifact(t *testing.T, s store.Store, set *kiln.BuildSetting, branch, commit string) *kiln.Artifact {
	t.Helper()
	b := newBuild(set, kiln.StatusComplete)
	b.Branch, b.Commit = branch, commit
	a := newArtifact(b)
	wantOK(t, s.CreateArtifact(t.Context(), a), "CreateArtifact")
	return a
}

func artifactID(a *kiln.Artifact) string { return a.BuildID }

// listArtifactIDs walks a whole filtered artifact list.
func listArtifactIDs(t *testing.T, s store.Store, orgID, projectID string, f store.ArtifactFilter, limit int) []string {
	t.Helper()
	return walk(t, limit, func(p store.Page) ([]*kiln.Artifact, string, error) {
		return s.ListArtifacts(t.Context(), orgID, projectID, f, p)
	}, artifactID, nil)
}

func testArtifacts(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateAndGet", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourcePerforce)
		set := createSetting(t, s, p)
		full := newArtifact(createBuild(t, s, set, kiln.StatusComplete))
		full.CreatedAt = full.CreatedAt.Add(time.Minute)
		bare := newArtifact(newBuild(set, kiln.StatusComplete)) // a Perforce build: no branch or commit
		bare.Branch, bare.Commit, bare.UEVersion, bare.ChecksumMD5, bare.SizeBytes = "", "", "", "", 0
		for _, a := range []*kiln.Artifact{full, bare} {
			wantOK(t, s.CreateArtifact(ctx, a), "CreateArtifact")
			got, err := s.GetArtifact(ctx, f.org.ID, a.BuildID)
			wantOK(t, err, "GetArtifact")
			wantEqual(t, "artifact", got, a)
		}
		items, next, err := s.ListArtifacts(ctx, f.org.ID, p.ID, store.ArtifactFilter{}, store.Page{Limit: 10})
		wantOK(t, err, "ListArtifacts")
		if next != "" {
			t.Fatalf("ListArtifacts: next %q after the only page", next)
		}
		wantEqual(t, "listed artifacts", items, []*kiln.Artifact{bare, full})

		again := *full
		again.Key, again.SizeBytes, again.CreatedAt = "elsewhere.tar.gz", 1, now().Add(time.Hour)
		wantCode(t, s.CreateArtifact(ctx, &again), kiln.EConflict, "CreateArtifact for a build that has one")
		got, err := s.GetArtifact(ctx, f.org.ID, full.BuildID)
		wantOK(t, err, "GetArtifact after the refused create")
		wantEqual(t, "artifact after the refused create", got, full)

		_, err = s.GetArtifact(ctx, other.org.ID, full.BuildID)
		wantCode(t, err, kiln.ENotFound, "GetArtifact of another organization")
		_, err = s.GetArtifact(ctx, f.org.ID, kiln.NewID())
		wantCode(t, err, kiln.ENotFound, "GetArtifact of an unknown build")
		wantIDs(t, "ListArtifacts of the project from another organization",
			listArtifactIDs(t, s, other.org.ID, p.ID, store.ArtifactFilter{}, 10), nil)

		// The same build id in another organization is another artifact.
		theirs := *full
		theirs.OrganizationID, theirs.Key = other.org.ID, "theirs.tar.gz"
		wantOK(t, s.CreateArtifact(ctx, &theirs), "CreateArtifact with the same build id in another organization")
		got, err = s.GetArtifact(ctx, other.org.ID, full.BuildID)
		wantOK(t, err, "GetArtifact in the other organization")
		wantEqual(t, "other organization's artifact", got, &theirs)
		got, err = s.GetArtifact(ctx, f.org.ID, full.BuildID)
		wantOK(t, err, "GetArtifact")
		wantEqual(t, "artifact", got, full)
	})

	t.Run("ListFilters", func(t *testing.T) { testArtifactFilters(t, open(t)) })

	t.Run("Delete", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		set := createSetting(t, s, p)
		var ids []string
		for range 6 {
			ids = append(ids, createArtifact(t, s, set, "main", "c0ffee").BuildID)
		}
		victim := ids[2]
		wantCode(t, s.DeleteArtifact(ctx, other.org.ID, victim), kiln.ENotFound, "DeleteArtifact of another organization")
		wantCode(t, s.DeleteArtifact(ctx, f.org.ID, kiln.NewID()), kiln.ENotFound, "DeleteArtifact of an unknown build")
		wantIDs(t, "artifacts after refused deletes", listArtifactIDs(t, s, f.org.ID, p.ID, store.ArtifactFilter{}, 4), newestFirst(ids))

		wantOK(t, s.DeleteArtifact(ctx, f.org.ID, victim), "DeleteArtifact")
		_, err := s.GetArtifact(ctx, f.org.ID, victim)
		wantCode(t, err, kiln.ENotFound, "GetArtifact after delete")
		wantCode(t, s.DeleteArtifact(ctx, f.org.ID, victim), kiln.ENotFound, "DeleteArtifact again")
		ids = append(ids[:2], ids[3:]...)
		wantIDs(t, "artifacts after delete", listArtifactIDs(t, s, f.org.ID, p.ID, store.ArtifactFilter{}, 4), newestFirst(ids))

		// A cursor naming a deleted artifact still leads on: delete each item right after its page.
		var got []string
		after := ""
		for range len(ids) + 1 {
			items, next, err := s.ListArtifacts(ctx, f.org.ID, p.ID, store.ArtifactFilter{}, store.Page{Limit: 1, After: after})
			wantOK(t, err, "ListArtifacts")
			for _, a := range items {
				got = append(got, a.BuildID)
				wantOK(t, s.DeleteArtifact(ctx, f.org.ID, a.BuildID), "DeleteArtifact while listing")
			}
			if after = next; after == "" {
				break
			}
		}
		wantIDs(t, "artifacts listed while each was deleted after its page", got, newestFirst(ids))
		wantIDs(t, "artifacts after deleting all", listArtifactIDs(t, s, f.org.ID, p.ID, store.ArtifactFilter{}, 4), nil)
	})

	t.Run("ListAfterProjectDeleted", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		set, otherSet := createSetting(t, s, p), createSetting(t, s, p)
		byID := map[string]*kiln.Artifact{}
		var all, ofSet []string
		for i := range 5 {
			use := set
			if i%2 == 1 {
				use = otherSet
			}
			a := createArtifact(t, s, use, "main", fmt.Sprintf("commit%d", i))
			byID[a.BuildID] = a
			all = append(all, a.BuildID)
			if use == set {
				ofSet = append(ofSet, a.BuildID)
			}
		}
		wantOK(t, s.DeleteProject(ctx, f.org.ID, p.ID), "DeleteProject")
		wantIDs(t, "artifacts of the deleted project", listArtifactIDs(t, s, f.org.ID, p.ID, store.ArtifactFilter{}, 2), newestFirst(all))
		wantIDs(t, "artifacts of the deleted project's setting",
			listArtifactIDs(t, s, f.org.ID, p.ID, store.ArtifactFilter{BuildSettingID: set.ID}, 2), newestFirst(ofSet))
		for id, a := range byID {
			got, err := s.GetArtifact(ctx, f.org.ID, id)
			wantOK(t, err, "GetArtifact after the project was deleted")
			wantEqual(t, "artifact", got, a)
		}
	})
}

// testArtifactFilters lists a varied set of artifacts of two projects with every combination of
// filters and compares each answer with a brute-force filter of the artifacts made.
func testArtifactFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := createOrganization(t, s)
	other := createOrganization(t, s)
	settings := twoByTwoSettings(t, s, f)
	branches := []string{"main", "dev", "release/1.0"}
	commits := []string{"aaaa", "bbbb", "cccc", "dddd"}
	var artifacts []*kiln.Artifact
	for i := range 30 {
		a := createArtifact(t, s, settings[i%4], branches[(i/2)%3], commits[(i/3)%4])
		artifacts = append(artifacts, a)
		if i%3 == 0 { // the same project, setting, branch and commit in another organization
			o := *a
			o.BuildID, o.OrganizationID = kiln.NewID(), other.org.ID
			wantOK(t, s.CreateArtifact(ctx, &o), "CreateArtifact in the other organization")
		}
	}
	matches := func(projectID string, fl store.ArtifactFilter, a *kiln.Artifact) bool {
		return a.ProjectID == projectID &&
			(fl.BuildSettingID == "" || fl.BuildSettingID == a.BuildSettingID) &&
			(fl.Branch == "" || fl.Branch == a.Branch) &&
			(fl.Commit == "" || fl.Commit == a.Commit)
	}
	for mask := range 8 {
		for _, pair := range [][2]int{{0, 0}, {13, 13}, {7, 22}, {1, 2}, {5, 28}} {
			a, b := artifacts[pair[0]], artifacts[pair[1]]
			var fl store.ArtifactFilter
			if mask&1 != 0 {
				fl.BuildSettingID = a.BuildSettingID
			}
			if mask&2 != 0 {
				fl.Branch = b.Branch
			}
			if mask&4 != 0 {
				fl.Commit = b.Commit
			}
			var want []string
			for _, it := range artifacts {
				if matches(a.ProjectID, fl, it) {
					want = append(want, it.BuildID)
				}
			}
			got := listArtifactIDs(t, s, f.org.ID, a.ProjectID, fl, 3)
			wantIDs(t, fmt.Sprintf("ListArtifacts %s %+v", a.ProjectID, fl), got, newestFirst(want))
		}
	}
	// The listed artifacts are whole.
	byID := map[string]*kiln.Artifact{}
	for _, a := range artifacts {
		byID[a.BuildID] = a
	}
	for _, set := range settings[:3] {
		items, _, err := s.ListArtifacts(ctx, f.org.ID, set.ProjectID, store.ArtifactFilter{}, store.Page{Limit: store.MaxLimit})
		wantOK(t, err, "ListArtifacts")
		for _, a := range items {
			wantEqual(t, "listed artifact", a, byID[a.BuildID])
		}
	}
	wantIDs(t, "ListArtifacts of an unknown project",
		listArtifactIDs(t, s, f.org.ID, kiln.NewID(), store.ArtifactFilter{}, 4), nil)
	wantIDs(t, "ListArtifacts with a filter nothing matches",
		listArtifactIDs(t, s, f.org.ID, settings[0].ProjectID, store.ArtifactFilter{Commit: "none"}, 4), nil)
}
