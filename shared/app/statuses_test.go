package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// statusesOf returns the states GitHub received for a commit, once every queued status was posted.
func (w *world) statusesOf(t *testing.T, sha string) []githubtest.Status {
	t.Helper()
	w.machine.statuses.Wait()
	var got []githubtest.Status
	for _, s := range w.gh.Statuses() {
		if s.SHA == sha {
			got = append(got, s)
		}
	}
	return got
}

func states(ss []githubtest.Status) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.State)
	}
	return strings.Join(out, ",")
}

func TestCommitStatusesFollowTheBuild(t *testing.T) {
	w := newWorld(t)
	w.gh.GrantStatuses(testInstallation)
	pid := w.addShooter(t)
	main := w.addSetting(t, pid, nil)["id"].(string)
	w.shooter.Commit("broken", "Break the cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_FAIL=cook\n"})
	broken := w.addSetting(t, pid, map[string]any{"branch": "broken", "platform": "Win64", "buildType": "Development"})["id"].(string)

	ok := w.waitEnded(t, w.trigger(t, pid, main, "")) // a branch build: pending once its checkout knows the commit
	if ok["status"] != "complete" {
		t.Fatalf("build: %v", ok)
	}
	got := w.statusesOf(t, ok["commit"].(string))
	if states(got) != "pending,success" {
		t.Fatalf("statuses of a completing build: %+v", got)
	}
	for _, s := range got {
		if s.Repo != "studio/shooter" || s.Context != "kiln/Linux-Shipping" || s.TargetURL != w.URL()+"/console/builds/"+ok["id"].(string) {
			t.Errorf("status: %+v", s)
		}
	}

	bad := w.waitEnded(t, w.trigger(t, pid, broken, ""))
	got = w.statusesOf(t, bad["commit"].(string))
	if bad["status"] != "failed" || states(got) != "pending,failure" || got[1].Context != "kiln/Win64-Development" ||
		!strings.Contains(got[1].Description, "RunUAT exited") {
		t.Fatalf("statuses of a failing build %v: %+v", bad, got)
	}
}

func TestCommitStatusesNeedThePermission(t *testing.T) {
	w := newWorld(t) // the installation did not grant statuses: write
	pid := w.addShooter(t)
	b := w.waitEnded(t, w.trigger(t, pid, w.addSetting(t, pid, nil)["id"].(string), ""))
	if b["status"] != "complete" {
		t.Fatalf("build: %v", b)
	}
	w.machine.statuses.Wait()
	if n := w.gh.Requests(githubtest.RouteStatuses); n != 0 || w.gh.Requests(githubtest.RouteInstallation) == 0 {
		t.Fatalf("%d statuses posted without the permission (permission read %d times)", n, w.gh.Requests(githubtest.RouteInstallation))
	}
}

func TestCommitStatusFailuresLeaveTheBuildAlone(t *testing.T) {
	w := newWorld(t)
	w.gh.GrantStatuses(testInstallation)
	w.gh.Fail(githubtest.RouteStatuses, http.StatusInternalServerError)
	pid := w.addShooter(t)
	b := w.waitEnded(t, w.trigger(t, pid, w.addSetting(t, pid, nil)["id"].(string), ""))
	if b["status"] != "complete" {
		t.Fatalf("build: %v", b)
	}
	w.machine.statuses.Wait()
	if w.gh.Requests(githubtest.RouteStatuses) != 2 || !strings.Contains(w.logs.String(), "commit status not posted") {
		t.Fatalf("%d statuses tried; logs:\n%s", w.gh.Requests(githubtest.RouteStatuses), w.logs.String())
	}
}
