package github

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

type projects map[string]*kiln.Project

func (p projects) GetProject(_ context.Context, _, id string) (*kiln.Project, error) {
	if pr := p[id]; pr != nil {
		return pr, nil
	}
	return nil, kiln.Errorf(kiln.ENotFound, "no project")
}

func TestStatusPosterStates(t *testing.T) {
	f := newFixture(t)
	f.gh.AddRepo(studio, "studio/game", true, "main")
	f.gh.GrantStatuses(studio)
	p := &StatusPoster{GitHub: f.c, PublicURL: "https://kiln.example", Projects: projects{
		"gh": {ID: "gh", SourceControl: kiln.SourceGitHub, RepoLink: "studio/game", InstallationID: "1"},
		"p4": {ID: "p4", SourceControl: kiln.SourcePerforce, RepoLink: "//depot/main"},
	}}
	ctx := context.Background()
	build := func(id, project, commit string, status kiln.BuildStatus, reason string) *kiln.Build {
		return &kiln.Build{ID: id, OrganizationID: "o", ProjectID: project, Commit: commit, Status: status, FailureReason: reason,
			Platform: kiln.Platform("Linux"), BuildType: kiln.BuildType("Shipping")}
	}
	p.BuildChanged(ctx, "", build("b0", "gh", "", kiln.StatusPending, ""))                     // no commit yet: nothing
	p.BuildChanged(ctx, "", build("b1", "gh", "sha1", kiln.StatusPending, ""))                 // created with its commit
	p.BuildChanged(ctx, kiln.StatusPending, build("b1", "gh", "sha1", kiln.StatusRunning, "")) // running: nothing new
	p.BuildChanged(ctx, kiln.StatusRunning, build("b1", "gh", "sha1", kiln.StatusFailed, "RunUAT exited with code 3"))
	p.CommitLearned(ctx, build("b2", "gh", "sha2", kiln.StatusRunning, ""))
	p.BuildChanged(ctx, kiln.StatusRunning, build("b2", "gh", "sha2", kiln.StatusFailed, "cancelled"))
	p.BuildChanged(ctx, kiln.StatusPending, build("b3", "gh", "sha3", kiln.StatusSuperseded, ""))
	p.BuildChanged(ctx, kiln.StatusRunning, build("b4", "gh", "sha4", kiln.StatusComplete, ""))
	p.BuildChanged(ctx, kiln.StatusRunning, build("b5", "p4", "sha5", kiln.StatusComplete, "")) // Perforce: nothing
	p.Wait()

	var got []string
	for _, s := range f.gh.Statuses() {
		got = append(got, s.SHA+":"+s.State)
		if s.Context != "kiln/Linux-Shipping" || !strings.HasPrefix(s.TargetURL, "https://kiln.example/console/builds/b") {
			t.Errorf("status %+v", s)
		}
	}
	want := "sha1:pending sha1:failure sha2:pending sha2:error sha3:error sha4:success"
	if strings.Join(got, " ") != want {
		t.Fatalf("statuses: %s\nwant      %s", strings.Join(got, " "), want)
	}
	if n := f.gh.Requests(githubtest.RouteInstallation); n != 1 {
		t.Errorf("the permission was read %d times, want once (cached)", n)
	}
}

func TestCreateStatusCutsLongDescriptions(t *testing.T) {
	f := newFixture(t)
	f.gh.AddRepo(studio, "studio/game", true, "main")
	f.gh.GrantStatuses(studio)
	err := f.c.CreateStatus(context.Background(), studio, "studio/game", "abc", CommitStatus{State: StateFailure, Context: "kiln/x",
		Description: strings.Repeat("é", 500)})
	if err != nil {
		t.Fatal(err)
	}
	if d := f.gh.Statuses()[0].Description; len([]rune(d)) != maxStatusDescription {
		t.Fatalf("description of %d characters", len([]rune(d)))
	}
}

func TestCanWriteStatusesIsCached(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if ok, err := f.c.CanWriteStatuses(ctx, studio); err != nil || ok {
		t.Fatalf("not granted: %v %v", ok, err)
	}
	f.gh.GrantStatuses(studio)
	if ok, _ := f.c.CanWriteStatuses(ctx, studio); ok {
		t.Fatal("a grant showed before the cache expired")
	}
	f.clock.Advance(permissionsTTL + time.Second)
	if ok, err := f.c.CanWriteStatuses(ctx, studio); err != nil || !ok {
		t.Fatalf("granted: %v %v", ok, err)
	}
}

func TestDiagnose(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		breakIt func(f *fixture)
		want    string
	}{
		{"uninstalled", func(f *fixture) { f.gh.RemoveInstallation(studio) }, "GitHub App was uninstalled"},
		{"suspended", func(f *fixture) { f.gh.SuspendInstallation(studio, true) }, "GitHub App installation is suspended"},
		{"repository removed", func(f *fixture) { f.gh.RemoveRepo("studio/game") }, "the repository studio/game was removed from the GitHub App installation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.gh.AddRepo(studio, "studio/game", true, "main")
			if _, err := f.c.Repo(ctx, studio, "studio/game"); err != nil {
				t.Fatal(err)
			}
			tt.breakIt(f)
			_, err := f.c.Repo(ctx, studio, "studio/game")
			if err == nil {
				t.Fatal("the repository is still reachable")
			}
			var ke *kiln.Error
			if d := f.c.Diagnose(ctx, studio, "studio/game", err); !errorsAs(d, &ke) || !strings.HasPrefix(ke.Message, tt.want) {
				t.Fatalf("diagnosis %v, want %q", d, tt.want)
			}
		})
	}
}
