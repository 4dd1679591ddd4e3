package github

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// memLog is a build's log in memory; it counts the reads.
type memLog struct {
	lines []string
	reads int
	max   int // the largest page asked for
}

func (l *memLog) Read(_ context.Context, _, _ string, from int64, max int) ([]buildlog.Line, error) {
	l.reads++
	l.max = max
	var out []buildlog.Line
	for i := from; i <= int64(len(l.lines)) && len(out) < max; i++ {
		out = append(out, buildlog.Line{Seq: i, LogLine: kiln.LogLine{Message: l.lines[i-1]}})
	}
	return out, nil
}

func checkRunFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	repo := f.gh.AddRepo(studio, "studio/game", true, "main")
	sha := repo.Commit("main", "first", "Ada Lovelace", map[string]string{"Game/Game.uproject": "{}", "Game/Source/A.cpp": "int a;"})
	f.gh.GrantStatuses(studio)
	f.gh.GrantChecks(studio)
	return f, sha
}

func checkPoster(f *fixture, log *memLog) *StatusPoster {
	return &StatusPoster{GitHub: f.c, PublicURL: "https://kiln.example", Logs: log, Projects: projects{
		"gh": {ID: "gh", SourceControl: kiln.SourceGitHub, RepoLink: "studio/game", InstallationID: "1", UprojectPath: "Game/Game.uproject"},
	}}
}

// With Checks: write a build gets one check run, queued, in progress, then completed with its
// errors annotated, 50 a request; no commit status.
func TestCheckRunFollowsTheBuild(t *testing.T) {
	f, sha := checkRunFixture(t)
	log := &memLog{lines: []string{"Setting up ProjectParams for /w/ws/main/Game/Game.uproject"}}
	for i := 1; i <= 120; i++ {
		log.lines = append(log.lines, fmt.Sprintf("/w/ws/main/Game/Source/A.cpp:%d:3: error: bad %d", i, i))
	}
	log.lines = append(log.lines, "/w/ws/main/Game/Source/A.cpp:1:3: error: bad 1") // a repeat
	p := checkPoster(f, log)
	ctx := context.Background()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	end := start.Add(3*time.Minute + 12*time.Second)
	b := &kiln.Build{ID: "b1", Number: 7, OrganizationID: "o", ProjectID: "gh", Commit: sha, Status: kiln.StatusPending,
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main"}
	p.BuildChanged(ctx, "", b)
	p.Wait()
	runs := f.gh.CheckRuns()
	if len(runs) != 1 || runs[0].Status != "queued" || runs[0].Name != "kiln/Linux-Shipping" || runs[0].ExternalID != "b1" ||
		runs[0].HeadSHA != sha || runs[0].DetailsURL != "https://kiln.example/console/builds/b1" {
		t.Fatalf("created: %+v", runs)
	}
	b.Status, b.StartedAt = kiln.StatusRunning, &start
	p.BuildChanged(ctx, kiln.StatusPending, b)
	p.Wait()
	if runs = f.gh.CheckRuns(); runs[0].Status != "in_progress" {
		t.Fatalf("running: %+v", runs[0])
	}
	b.Status, b.FinishedAt, b.FailureReason = kiln.StatusFailed, &end, "RunUAT exited with code 3"
	p.BuildChanged(ctx, kiln.StatusRunning, b)
	p.Wait()

	runs = f.gh.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1", len(runs))
	}
	r := runs[0]
	if r.Status != "completed" || r.Conclusion != "failure" || r.Title != "Build #7 failed" {
		t.Errorf("completed: %+v", r)
	}
	for _, want := range []string{"**Build #7** · Linux · Shipping", "Duration: 3m12s", "Failure: RunUAT exited with code 3", "120 errors and 0 warnings"} {
		if !strings.Contains(r.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.Summary)
		}
	}
	if len(r.Annotations) != 120 || r.Updates != 4 { // in progress, completed with 50, then 50 and 20
		t.Fatalf("%d annotations in %d updates, want 120 in 4", len(r.Annotations), r.Updates)
	}
	a := r.Annotations[41]
	if a.GetPath() != "Game/Source/A.cpp" || a.GetStartLine() != 42 || a.GetStartColumn() != 3 || a.GetAnnotationLevel() != "failure" || a.GetMessage() != "bad 42" {
		t.Errorf("annotation: %+v", a)
	}
	if log.max != logPage {
		t.Errorf("the log was read %d lines at a time, want %d", log.max, logPage)
	}
	if n := len(f.gh.Statuses()); n != 0 {
		t.Errorf("%d commit statuses posted beside the check run", n)
	}
}

// A process that did not create a build's check run finds it on GitHub; a build that ends with
// none gets one, completed.
func TestCheckRunFoundOrCreatedLate(t *testing.T) {
	f, sha := checkRunFixture(t)
	ctx := context.Background()
	b := &kiln.Build{ID: "b1", Number: 1, OrganizationID: "o", ProjectID: "gh", Commit: sha, Status: kiln.StatusPending,
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping}
	first := checkPoster(f, &memLog{})
	first.BuildChanged(ctx, "", b)
	first.Wait()
	b.Status = kiln.StatusComplete
	other := checkPoster(f, &memLog{}) // another Lambda: no memory of the run
	other.BuildChanged(ctx, kiln.StatusRunning, b)
	other.Wait()
	late := &kiln.Build{ID: "b2", Number: 2, OrganizationID: "o", ProjectID: "gh", Commit: sha, Status: kiln.StatusFailed,
		FailureReason: "cancelled", Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping}
	other.BuildChanged(ctx, kiln.StatusRunning, late)
	other.Wait()

	runs := f.gh.CheckRuns()
	if len(runs) != 2 || runs[0].ExternalID != "b1" || runs[0].Conclusion != "success" || runs[0].Updates != 1 ||
		runs[1].ExternalID != "b2" || runs[1].Conclusion != "cancelled" || runs[1].Updates != 0 {
		t.Fatalf("check runs: %+v", runs)
	}
	if f.gh.Requests(githubtest.RouteListCheckRuns) != 2 {
		t.Errorf("listed check runs %d times, want 2", f.gh.Requests(githubtest.RouteListCheckRuns))
	}
}

// Without Checks: write the build still gets commit statuses, and the pending → running change
// posts none.
func TestNoChecksPermissionKeepsStatuses(t *testing.T) {
	f := newFixture(t)
	repo := f.gh.AddRepo(studio, "studio/game", true, "main")
	sha := repo.Commit("main", "first", "Ada Lovelace", map[string]string{"Game/Game.uproject": "{}"})
	f.gh.GrantStatuses(studio)
	p := checkPoster(f, &memLog{})
	ctx := context.Background()
	b := &kiln.Build{ID: "b1", OrganizationID: "o", ProjectID: "gh", Commit: sha, Status: kiln.StatusPending,
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping}
	p.BuildChanged(ctx, "", b)
	b.Status = kiln.StatusRunning
	p.BuildChanged(ctx, kiln.StatusPending, b)
	b.Status = kiln.StatusComplete
	p.BuildChanged(ctx, kiln.StatusRunning, b)
	p.Wait()
	if n := len(f.gh.CheckRuns()); n != 0 {
		t.Fatalf("%d check runs without the permission", n)
	}
	if got := f.gh.Statuses(); len(got) != 2 || got[0].State != "pending" || got[1].State != "success" {
		t.Fatalf("statuses: %+v", got)
	}
}

// The client refuses more than 50 annotations in one request, as GitHub would.
func TestCheckRunAnnotationLimit(t *testing.T) {
	f, sha := checkRunFixture(t)
	run := CheckRun{Name: "kiln/x", HeadSHA: sha, Title: "t", Summary: "s"}
	for i := 1; i <= MaxAnnotationsPerRequest+1; i++ {
		run.Annotations = append(run.Annotations, Annotation{Path: "a.cpp", StartLine: i, Level: LevelFailure, Message: "m"})
	}
	_, err := f.c.CreateCheckRun(context.Background(), studio, "studio/game", run)
	wantCode(t, err, kiln.EValidation)
	if n := f.gh.Requests(githubtest.RouteCreateCheckRun); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}
