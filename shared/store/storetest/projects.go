package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// newProject builds (without storing) a project of the given kind.
func newProject(orgID string, source kiln.SourceControl) *kiln.Project {
	at := now()
	p := &kiln.Project{
		ID:             kiln.NewID(),
		OrganizationID: orgID,
		Name:           "Shooter",
		Description:    "A game with ünïcode and \"quotes\"",
		SourceControl:  source,
		UprojectPath:   "Game/Shooter.uproject",
		CreatedAt:      at,
		UpdatedAt:      at,
	}
	switch source {
	case kiln.SourceGitHub:
		p.RepoLink, p.InstallationID, p.DefaultBranch = "studio/shooter", "4242", "main"
	case kiln.SourcePerforce:
		p.Depot, p.StreamPath = "//Shooter", "//Shooter/Main"
		p.RepoLink = p.StreamPath
		p.DepotPath = "//Shooter/Main/..." // a classic depot path round-trips (streams leave it "")
	}
	return p
}

func createProject(t *testing.T, s store.Store, orgID string, source kiln.SourceControl) *kiln.Project {
	t.Helper()
	p := newProject(orgID, source)
	wantOK(t, s.CreateProject(t.Context(), p, 0), "CreateProject")
	return p
}

func uproject() *kiln.UprojectInfo {
	return &kiln.UprojectInfo{
		Path:          "Game/Shooter.uproject",
		ProjectName:   "Shooter",
		EngineVersion: "5.3",
		Modules: []kiln.UprojectModule{
			{Name: "Shooter", Type: "Runtime", LoadingPhase: "Default"},
			{Name: "ShooterEditor", Type: "Editor", LoadingPhase: "PostEngineInit"},
		},
		Plugins: []kiln.UprojectPlugin{{Name: "OnlineSubsystemSteam", Enabled: true}, {Name: "Bink", Enabled: false}},
	}
}

func testProjects(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateAndGet", func(t *testing.T) {
		cases := []struct {
			name    string
			source  kiln.SourceControl
			info    *kiln.UprojectInfo
			lastRun bool
		}{
			{"GitHubWithoutUproject", kiln.SourceGitHub, nil, false},
			{"GitHubWithUproject", kiln.SourceGitHub, uproject(), true},
			{"PerforceEmptyModules", kiln.SourcePerforce, &kiln.UprojectInfo{Path: "A.uproject", ProjectName: "A"}, false},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s, ctx := open(t), t.Context()
				f := createOrganization(t, s)
				p := newProject(f.org.ID, c.source)
				p.Uproject = c.info
				if c.lastRun {
					p.LastBuildAt, p.LastBuildStatus = ptr(now()), kiln.StatusFailed
				}
				wantOK(t, s.CreateProject(ctx, p, 0), "CreateProject")
				got, err := s.GetProject(ctx, f.org.ID, p.ID)
				wantOK(t, err, "GetProject")
				wantEqual(t, "project", got, p)
			})
		}
	})

	t.Run("ListWithSourceControlFilter", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		want := map[kiln.SourceControl][]string{}
		byID := map[string]*kiln.Project{}
		for i := range 7 {
			source := kiln.SourceGitHub
			if i%3 == 1 {
				source = kiln.SourcePerforce
			}
			p := createProject(t, s, f.org.ID, source)
			byID[p.ID] = p
			want[source] = append(want[source], p.ID)
			want[""] = append(want[""], p.ID)
			createProject(t, s, other.org.ID, source)
		}
		for _, source := range []kiln.SourceControl{"", kiln.SourceGitHub, kiln.SourcePerforce} {
			for _, limit := range []int{1, 2, 3, store.MaxLimit} {
				got := walk(t, limit, func(p store.Page) ([]*kiln.Project, string, error) {
					return s.ListProjects(ctx, f.org.ID, store.ProjectFilter{SourceControl: source}, p)
				}, projectID, nil)
				wantIDs(t, "ListProjects "+string(source), got, newestFirst(want[source]))
			}
		}
		items, _, err := s.ListProjects(ctx, f.org.ID, store.ProjectFilter{}, store.Page{Limit: store.MaxLimit})
		wantOK(t, err, "ListProjects")
		for _, p := range items {
			wantEqual(t, "listed project", p, byID[p.ID])
		}
	})

	t.Run("Update", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		want := *p
		want.Name, want.Description = "Shooter 2", ""
		want.Uproject = uproject()
		want.LastBuildAt, want.LastBuildStatus = ptr(now()), kiln.StatusComplete
		want.UpdatedAt = p.UpdatedAt.Add(time.Second)
		update := want
		// Fields fixed at creation do not change.
		update.SourceControl, update.RepoLink, update.InstallationID = kiln.SourcePerforce, "x/y", "1"
		update.DefaultBranch, update.Depot, update.StreamPath = "dev", "//D", "//D/S"
		update.CreatedAt = p.CreatedAt.Add(time.Hour)
		wantOK(t, s.UpdateProject(ctx, &update), "UpdateProject")
		got, err := s.GetProject(ctx, f.org.ID, p.ID)
		wantOK(t, err, "GetProject")
		wantEqual(t, "updated project", got, &want)

		want.Uproject, want.LastBuildAt = nil, nil
		update = want
		wantOK(t, s.UpdateProject(ctx, &update), "UpdateProject clearing uproject")
		got, err = s.GetProject(ctx, f.org.ID, p.ID)
		wantOK(t, err, "GetProject")
		wantEqual(t, "project after clearing", got, &want)
	})

	t.Run("DeleteRemovesSettingsButNotBuilds", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		keep := createProject(t, s, f.org.ID, kiln.SourceGitHub)
		set := createSetting(t, s, p)
		kept := createSetting(t, s, keep)
		b := createBuild(t, s, set, kiln.StatusComplete)

		wantOK(t, s.DeleteProject(ctx, f.org.ID, p.ID), "DeleteProject")
		_, err := s.GetProject(ctx, f.org.ID, p.ID)
		wantCode(t, err, kiln.ENotFound, "GetProject after delete")
		_, err = s.GetBuildSetting(ctx, f.org.ID, p.ID, set.ID)
		wantCode(t, err, kiln.ENotFound, "GetBuildSetting after its project was deleted")
		settings, err := s.ListBuildSettings(ctx, f.org.ID, p.ID)
		wantOK(t, err, "ListBuildSettings")
		if len(settings) != 0 {
			t.Fatalf("ListBuildSettings of a deleted project: %d settings", len(settings))
		}
		got, err := s.GetBuild(ctx, f.org.ID, b.ID)
		wantOK(t, err, "GetBuild after its project was deleted")
		wantEqual(t, "build", got, b)
		ids := walk(t, 10, func(pg store.Page) ([]*kiln.Build, string, error) {
			return s.ListBuilds(ctx, f.org.ID, store.BuildFilter{ProjectID: p.ID}, pg)
		}, buildID, nil)
		wantIDs(t, "ListBuilds of a deleted project", ids, []string{b.ID})
		gotSet, err := s.GetBuildSetting(ctx, f.org.ID, keep.ID, kept.ID)
		wantOK(t, err, "GetBuildSetting of another project")
		wantEqual(t, "other project's setting", gotSet, kept)
		wantCode(t, s.DeleteProject(ctx, f.org.ID, p.ID), kiln.ENotFound, "DeleteProject again")
		wantCode(t, s.UpdateProject(ctx, p), kiln.ENotFound, "UpdateProject of a deleted project")
	})

	t.Run("OtherOrganizationIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		p := createProject(t, s, f.org.ID, kiln.SourcePerforce)

		_, err := s.GetProject(ctx, other.org.ID, p.ID)
		wantCode(t, err, kiln.ENotFound, "GetProject of another organization")
		update := *p
		update.OrganizationID, update.Name = other.org.ID, "Stolen"
		wantCode(t, s.UpdateProject(ctx, &update), kiln.ENotFound, "UpdateProject of another organization")
		wantCode(t, s.DeleteProject(ctx, other.org.ID, p.ID), kiln.ENotFound, "DeleteProject of another organization")
		unknown := newProject(f.org.ID, kiln.SourceGitHub)
		wantCode(t, s.UpdateProject(ctx, unknown), kiln.ENotFound, "UpdateProject of an unknown project")
		wantCode(t, s.DeleteProject(ctx, f.org.ID, unknown.ID), kiln.ENotFound, "DeleteProject of an unknown project")
		_, err = s.GetProject(ctx, f.org.ID, unknown.ID)
		wantCode(t, err, kiln.ENotFound, "GetProject of an unknown project")

		got, err := s.GetProject(ctx, f.org.ID, p.ID)
		wantOK(t, err, "GetProject")
		wantEqual(t, "project untouched", got, p)
		_, err = s.GetProject(ctx, other.org.ID, p.ID)
		wantCode(t, err, kiln.ENotFound, "GetProject of another organization after the refused update")
	})
}
