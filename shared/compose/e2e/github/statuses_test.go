package github

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

func states(ss []githubtest.Status) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.State)
	}
	return strings.Join(out, ",")
}

func TestCommitStatusesFollowTheBuild(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	w.GitHub.GrantStatuses(e2e.InstallationID)
	pid := w.AddShooter(t)
	main := w.AddSetting(t, pid, nil)["id"].(string)
	w.Shooter.Commit("broken", "Break the cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_FAIL=cook\n"})
	broken := w.AddSetting(t, pid, map[string]any{"branch": "broken", "platform": "Win64", "buildType": "Development"})["id"].(string)

	ok := w.WaitEnded(t, w.Trigger(t, pid, main, "")) // a branch build: pending once its checkout knows the commit
	if ok["status"] != "complete" {
		t.Fatalf("build: %v", ok)
	}
	got := w.StatusesOf(t, ok["commit"].(string))
	if states(got) != "pending,success" {
		t.Fatalf("statuses of a completing build: %+v", got)
	}
	for _, s := range got {
		if s.Repo != "studio/shooter" || s.Context != "kiln/Linux-Shipping" || s.TargetURL != w.URL()+"/console/builds/"+ok["id"].(string) {
			t.Errorf("status: %+v", s)
		}
	}

	bad := w.WaitEnded(t, w.Trigger(t, pid, broken, ""))
	got = w.StatusesOf(t, bad["commit"].(string))
	if bad["status"] != "failed" || states(got) != "pending,failure" || got[1].Context != "kiln/Win64-Development" ||
		!strings.Contains(got[1].Description, "RunUAT exited") {
		t.Fatalf("statuses of a failing build %v: %+v", bad, got)
	}
}

func TestCommitStatusesNeedThePermission(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve) // the installation did not grant statuses: write
	pid := w.AddShooter(t)
	b := w.WaitEnded(t, w.Trigger(t, pid, w.AddSetting(t, pid, nil)["id"].(string), ""))
	if b["status"] != "complete" {
		t.Fatalf("build: %v", b)
	}
	w.Service.WaitStatusesPosted()
	if n := w.GitHub.Requests(githubtest.RouteStatuses); n != 0 || w.GitHub.Requests(githubtest.RouteInstallation) == 0 {
		t.Fatalf("%d statuses posted without the permission (permission read %d times)", n, w.GitHub.Requests(githubtest.RouteInstallation))
	}
}

func TestCommitStatusFailuresLeaveTheBuildAlone(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	w.GitHub.GrantStatuses(e2e.InstallationID)
	w.GitHub.Fail(githubtest.RouteStatuses, http.StatusInternalServerError)
	pid := w.AddShooter(t)
	b := w.WaitEnded(t, w.Trigger(t, pid, w.AddSetting(t, pid, nil)["id"].(string), ""))
	if b["status"] != "complete" {
		t.Fatalf("build: %v", b)
	}
	w.Service.WaitStatusesPosted()
	if w.GitHub.Requests(githubtest.RouteStatuses) != 2 || !strings.Contains(w.Logs.String(), "commit status not posted") {
		t.Fatalf("%d statuses tried; logs:\n%s", w.GitHub.Requests(githubtest.RouteStatuses), w.Logs.String())
	}
}
