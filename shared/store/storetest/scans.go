package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// scheduledIn returns the scheduled settings of the given organizations, by organization and id,
// checking that every setting the scan returns is scheduled. The scan's order is not part of the
// contract.
func scheduledIn(t *testing.T, s store.Store, orgIDs ...string) []*kiln.BuildSetting {
	t.Helper()
	all, err := s.ScheduledBuildSettings(t.Context())
	wantOK(t, err, "ScheduledBuildSettings")
	var out []*kiln.BuildSetting
	for _, set := range all {
		if set.Trigger != kiln.TriggerScheduled {
			t.Fatalf("ScheduledBuildSettings returned setting %s with trigger %s", set.ID, set.Trigger)
		}
		if slices.Contains(orgIDs, set.OrganizationID) {
			out = append(out, set)
		}
	}
	sortSettings(out)
	return out
}

func sortSettings(sets []*kiln.BuildSetting) {
	slices.SortFunc(sets, func(a, b *kiln.BuildSetting) int {
		return cmp.Or(cmp.Compare(a.OrganizationID, b.OrganizationID), cmp.Compare(a.ID, b.ID))
	})
}

func testScheduledBuildSettings(t *testing.T, open func(t *testing.T) store.Store) {
	s, ctx := open(t), t.Context()
	a, b := createOrganization(t, s), createOrganization(t, s)
	orgs := []string{a.org.ID, b.org.ID}
	pa, pb, pb2 := createProject(t, s, a.org.ID, kiln.SourceGitHub), createProject(t, s, b.org.ID, kiln.SourcePerforce),
		createProject(t, s, b.org.ID, kiln.SourceGitHub)
	scheduled := func(p *kiln.Project, schedule string) *kiln.BuildSetting {
		set := newSetting(p)
		set.Trigger, set.Schedule = kiln.TriggerScheduled, schedule
		wantOK(t, s.CreateBuildSetting(ctx, set), "CreateBuildSetting")
		return set
	}
	a1, a2 := scheduled(pa, "0 3 * * *"), createSetting(t, s, pa)
	a3 := newSetting(pa)
	a3.Trigger = kiln.TriggerPush
	wantOK(t, s.CreateBuildSetting(ctx, a3), "CreateBuildSetting")
	b1, b2 := scheduled(pb, "*/15 * * * *"), scheduled(pb2, "0 0 * * 1")
	want := func(what string, sets ...*kiln.BuildSetting) {
		t.Helper()
		sets = slices.Clone(sets)
		sortSettings(sets)
		wantEqual(t, what, scheduledIn(t, s, orgs...), sets)
	}
	want("scheduled settings", a1, b1, b2)

	// The trigger decides, on every update.
	a1.Trigger, a1.Schedule, a1.UpdatedAt = kiln.TriggerManual, "", a1.UpdatedAt.Add(time.Minute)
	wantOK(t, s.UpdateBuildSetting(ctx, a1), "UpdateBuildSetting scheduled→manual")
	a2.Trigger, a2.Schedule, a2.UpdatedAt = kiln.TriggerScheduled, "30 2 * * *", a2.UpdatedAt.Add(time.Minute)
	wantOK(t, s.UpdateBuildSetting(ctx, a2), "UpdateBuildSetting manual→scheduled")
	want("after switching triggers", a2, b1, b2)
	b1.Schedule, b1.Platform, b1.UpdatedAt = "0 4 * * *", kiln.PlatformWin64, b1.UpdatedAt.Add(time.Minute)
	wantOK(t, s.UpdateBuildSetting(ctx, b1), "UpdateBuildSetting of a scheduled setting")
	want("after changing a schedule", a2, b1, b2)
	a1.Trigger, a1.Schedule, a1.UpdatedAt = kiln.TriggerScheduled, "0 5 * * *", a1.UpdatedAt.Add(time.Minute)
	wantOK(t, s.UpdateBuildSetting(ctx, a1), "UpdateBuildSetting manual→scheduled again")
	a3.Trigger, a3.Schedule = kiln.TriggerManual, ""
	wantOK(t, s.UpdateBuildSetting(ctx, a3), "UpdateBuildSetting push→manual")
	want("after switching back", a1, a2, b1, b2)

	wantOK(t, s.DeleteBuildSetting(ctx, a.org.ID, pa.ID, a2.ID), "DeleteBuildSetting")
	want("after deleting a setting", a1, b1, b2)
	wantOK(t, s.DeleteProject(ctx, b.org.ID, pb2.ID), "DeleteProject")
	want("after deleting a project", a1, b1)
	wantOK(t, s.DeleteProject(ctx, a.org.ID, pa.ID), "DeleteProject")
	want("after deleting the other project", b1)
}

// pastArtifact makes (without storing) an artifact of a new build of set, made at `at`.
func pastArtifact(set *kiln.BuildSetting, at time.Time) *kiln.Artifact {
	b := newBuild(set, kiln.StatusComplete)
	a := newArtifact(b)
	a.CreatedAt = at
	return a
}

func testArtifactsCreatedBefore(t *testing.T, open func(t *testing.T) store.Store) {
	s, ctx := open(t), t.Context()
	sets := settingsOfOrganizations(t, s, 3)
	// Artifacts of three organizations made a minute apart in 2003 (see queue.go for why so
	// early), stored out of order, then one exactly at the cutoff and one just after.
	base := time.Date(2003, 1, 1, 0, 0, 0, 0, time.UTC)
	cutoff := base.Add(8 * time.Minute)
	made := make([]*kiln.Artifact, 8)
	for i := range made {
		made[i] = pastArtifact(sets[i%3], base.Add(time.Duration(i)*time.Minute))
	}
	atCutoff := pastArtifact(sets[1], cutoff)
	after := pastArtifact(sets[0], cutoff.Add(time.Millisecond))
	stored := []*kiln.Artifact{atCutoff, after}
	for _, i := range []int{5, 0, 7, 3, 1, 6, 2, 4} {
		stored = append(stored, made[i])
	}
	for _, a := range stored {
		wantOK(t, s.CreateArtifact(ctx, a), "CreateArtifact")
	}
	t.Cleanup(func() {
		for _, a := range stored {
			_ = s.DeleteArtifact(context.Background(), a.OrganizationID, a.BuildID)
		}
	})

	before := func(at time.Time, limit int) []*kiln.Artifact {
		t.Helper()
		got, err := s.ArtifactsCreatedBefore(ctx, at, limit)
		wantOK(t, err, "ArtifactsCreatedBefore")
		if len(got) > limit {
			t.Fatalf("ArtifactsCreatedBefore(%v, %d): %d artifacts", at, limit, len(got))
		}
		return got
	}
	wantEqual(t, "artifacts made before the cutoff", before(cutoff, store.MaxLimit), made)
	wantEqual(t, "artifacts made before the cutoff and 1 ms", before(cutoff.Add(time.Millisecond), store.MaxLimit),
		append(slices.Clone(made), atCutoff))
	wantEqual(t, "artifacts made before the first", before(base, store.MaxLimit), []*kiln.Artifact(nil))
	wantEqual(t, "artifacts made before the second", before(base.Add(time.Minute), store.MaxLimit), made[:1])
	for _, limit := range []int{1, 3} {
		wantEqual(t, fmt.Sprintf("ArtifactsCreatedBefore(cutoff, %d)", limit), before(cutoff, limit), made[:limit])
	}

	for _, gone := range []int{0, 4} {
		wantOK(t, s.DeleteArtifact(ctx, made[gone].OrganizationID, made[gone].BuildID), "DeleteArtifact")
	}
	wantEqual(t, "artifacts made before the cutoff after deletes", before(cutoff, store.MaxLimit),
		[]*kiln.Artifact{made[1], made[2], made[3], made[5], made[6], made[7]})
	wantEqual(t, "ArtifactsCreatedBefore(cutoff, 2) after deletes", before(cutoff, 2), []*kiln.Artifact{made[1], made[2]})
}
