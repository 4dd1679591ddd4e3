package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// newSetting builds (without storing) a build setting of project p.
func newSetting(p *kiln.Project) *kiln.BuildSetting {
	at := now()
	s := &kiln.BuildSetting{
		ID:             kiln.NewID(),
		OrganizationID: p.OrganizationID,
		ProjectID:      p.ID,
		Platform:       kiln.PlatformLinux,
		BuildType:      kiln.BuildTypeDevelopment,
		UEVersion:      "5.3",
		Trigger:        kiln.TriggerManual,
		CreatedAt:      at,
		UpdatedAt:      at,
	}
	if p.SourceControl == kiln.SourcePerforce {
		s.StreamPath = p.StreamPath
	} else {
		s.Branch = "main"
	}
	return s
}

func createSetting(t *testing.T, s store.Store, p *kiln.Project) *kiln.BuildSetting {
	t.Helper()
	set := newSetting(p)
	wantOK(t, s.CreateBuildSetting(t.Context(), set), "CreateBuildSetting")
	return set
}

// createOrganizationSetting makes an organization with a GitHub project and a setting of it.
func createOrganizationSetting(t *testing.T, s store.Store) (fixture, *kiln.BuildSetting) {
	t.Helper()
	f := createOrganization(t, s)
	return f, createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub))
}

// settingsOfOrganizations makes n organizations with a project and a setting each and returns
// the settings.
func settingsOfOrganizations(t *testing.T, s store.Store, n int) []*kiln.BuildSetting {
	t.Helper()
	var sets []*kiln.BuildSetting
	for range n {
		f := createOrganization(t, s)
		sets = append(sets, createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub)))
	}
	return sets
}

// twoByTwoSettings makes two projects of f's organization with two settings each.
func twoByTwoSettings(t *testing.T, s store.Store, f fixture) []*kiln.BuildSetting {
	t.Helper()
	var sets []*kiln.BuildSetting
	for range 2 {
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		sets = append(sets, createSetting(t, s, p), createSetting(t, s, p))
	}
	return sets
}

func testBuildSettings(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateAndGet", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		set := newSetting(p)
		set.Trigger, set.Schedule = kiln.TriggerScheduled, "0 3 * * *"
		set.NotifyOnComplete, set.AutoDeploy = true, true
		set.UploadBuildURL, set.UploadBuildAuthHeader = "https://deploy.example.com/up", []byte{0, 1, 2, 0xff, 'x'}
		set.UprojectPath, set.TimeoutMinutes, set.AgentPool = "Game/Shooter.uproject", 90, "win64-ue5.4"
		wantOK(t, s.CreateBuildSetting(ctx, set), "CreateBuildSetting")
		got, err := s.GetBuildSetting(ctx, f.org.ID, p.ID, set.ID)
		wantOK(t, err, "GetBuildSetting")
		wantEqual(t, "setting", got, set)
	})

	t.Run("CreateUnderUnknownProjectIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		otherProject := createProject(t, s, other.org.ID, kiln.SourceGitHub)
		cases := []struct {
			name string
			set  *kiln.BuildSetting
		}{
			{"UnknownProject", newSetting(newProject(f.org.ID, kiln.SourceGitHub))},
			{"ProjectOfAnotherOrganization", func() *kiln.BuildSetting {
				set := newSetting(otherProject)
				set.OrganizationID = f.org.ID
				return set
			}()},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantCode(t, s.CreateBuildSetting(ctx, c.set), kiln.ENotFound, "CreateBuildSetting")
				_, err := s.GetBuildSetting(ctx, c.set.OrganizationID, c.set.ProjectID, c.set.ID)
				wantCode(t, err, kiln.ENotFound, "GetBuildSetting of the refused setting")
			})
		}
		settings, err := s.ListBuildSettings(ctx, other.org.ID, otherProject.ID)
		wantOK(t, err, "ListBuildSettings")
		if len(settings) != 0 {
			t.Fatalf("the other organization's project got %d settings", len(settings))
		}
	})

	t.Run("ListOldestFirst", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		q := createProject(t, s, f.org.ID, kiln.SourcePerforce)
		var want []*kiln.BuildSetting
		for i := range 4 {
			set := newSetting(p)
			set.Platform = kiln.Platforms[i]
			wantOK(t, s.CreateBuildSetting(ctx, set), "CreateBuildSetting")
			want = append(want, set)
			createSetting(t, s, q)
		}
		got, err := s.ListBuildSettings(ctx, f.org.ID, p.ID)
		wantOK(t, err, "ListBuildSettings")
		wantEqual(t, "ListBuildSettings", got, want)
		none, err := s.ListBuildSettings(ctx, f.org.ID, kiln.NewID())
		wantOK(t, err, "ListBuildSettings of an unknown project")
		if len(none) != 0 {
			t.Fatalf("ListBuildSettings of an unknown project: %d settings", len(none))
		}
		other := createOrganization(t, s)
		none, err = s.ListBuildSettings(ctx, other.org.ID, p.ID)
		wantOK(t, err, "ListBuildSettings from another organization")
		if len(none) != 0 {
			t.Fatalf("ListBuildSettings from another organization: %d settings", len(none))
		}
	})

	t.Run("Update", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		set := createSetting(t, s, p)
		steps := []func(*kiln.BuildSetting){
			func(b *kiln.BuildSetting) {
				b.Platform, b.BuildType, b.Branch, b.UEVersion = kiln.PlatformWin64, kiln.BuildTypeShipping, "release/1.0", "5.4.1"
				b.UprojectPath, b.Trigger, b.Schedule = "Other/Other.uproject", kiln.TriggerScheduled, "*/5 * * * *"
				b.NotifyOnComplete, b.AutoDeploy = true, true
				b.UploadBuildURL, b.UploadBuildAuthHeader = "https://ci.example.com/upload?x=1", []byte("sealed\x00header")
				b.TimeoutMinutes, b.AgentPool = 30, "win64-ue5.4"
				b.UpdatedAt = b.UpdatedAt.Add(time.Minute)
			},
			func(b *kiln.BuildSetting) {
				b.Branch, b.StreamPath = "", "//Depot/Main"
				b.Trigger, b.Schedule, b.UprojectPath = kiln.TriggerPush, "", ""
				b.NotifyOnComplete, b.AutoDeploy = false, false
				b.UploadBuildURL, b.UploadBuildAuthHeader = "", nil
				b.TimeoutMinutes, b.AgentPool = 0, ""
				b.UpdatedAt = b.UpdatedAt.Add(time.Minute)
			},
		}
		for i, step := range steps {
			step(set)
			wantOK(t, s.UpdateBuildSetting(ctx, set), "UpdateBuildSetting")
			got, err := s.GetBuildSetting(ctx, f.org.ID, p.ID, set.ID)
			wantOK(t, err, "GetBuildSetting")
			wantEqual(t, "setting after update "+string(rune('1'+i)), got, set)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		set := createSetting(t, s, p)
		keep := createSetting(t, s, p)
		wantOK(t, s.DeleteBuildSetting(ctx, f.org.ID, p.ID, set.ID), "DeleteBuildSetting")
		_, err := s.GetBuildSetting(ctx, f.org.ID, p.ID, set.ID)
		wantCode(t, err, kiln.ENotFound, "GetBuildSetting after delete")
		got, err := s.ListBuildSettings(ctx, f.org.ID, p.ID)
		wantOK(t, err, "ListBuildSettings")
		wantEqual(t, "settings after delete", got, []*kiln.BuildSetting{keep})
		wantCode(t, s.DeleteBuildSetting(ctx, f.org.ID, p.ID, set.ID), kiln.ENotFound, "DeleteBuildSetting again")
		wantCode(t, s.UpdateBuildSetting(ctx, set), kiln.ENotFound, "UpdateBuildSetting of a deleted setting")
	})

	t.Run("OtherOrganizationOrProjectIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		q := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		set := createSetting(t, s, p)
		cases := []struct{ name, org, project string }{
			{"OtherOrganization", other.org.ID, p.ID},
			{"OtherProject", f.org.ID, q.ID},
			{"UnknownProject", f.org.ID, kiln.NewID()},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.GetBuildSetting(ctx, c.org, c.project, set.ID)
				wantCode(t, err, kiln.ENotFound, "GetBuildSetting")
				update := *set
				update.OrganizationID, update.ProjectID, update.Branch = c.org, c.project, "stolen"
				wantCode(t, s.UpdateBuildSetting(ctx, &update), kiln.ENotFound, "UpdateBuildSetting")
				wantCode(t, s.DeleteBuildSetting(ctx, c.org, c.project, set.ID), kiln.ENotFound, "DeleteBuildSetting")
				got, err := s.GetBuildSetting(ctx, f.org.ID, p.ID, set.ID)
				wantOK(t, err, "GetBuildSetting")
				wantEqual(t, "setting untouched", got, set)
			})
		}
		_, err := s.GetBuildSetting(ctx, f.org.ID, p.ID, kiln.NewID())
		wantCode(t, err, kiln.ENotFound, "GetBuildSetting of an unknown id")
	})
}
