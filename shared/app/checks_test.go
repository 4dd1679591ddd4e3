package app

import (
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// checkRunOf returns the check run GitHub holds for a build once it is completed, or as it is
// after 10 seconds (the API shows a build ended a moment before its end is posted).
func (w *world) checkRunOf(t *testing.T, buildID string) (githubtest.CheckRun, bool) {
	t.Helper()
	var run githubtest.CheckRun
	found := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if w.Service != nil { // kiln serve: its poster's queue; aws-local's Lambdas post synchronously
			w.machine.statuses.Wait()
		}
		for _, c := range w.gh.CheckRuns() {
			if c.ExternalID == buildID {
				run, found = c, true
			}
		}
		if run.Status == "completed" {
			break
		}
	}
	return run, found
}

// With Checks: write, a build failing with a compile error is a failed check run with the error
// annotated on its file and line; GitHub's "Re-run" of the check run re-runs the build.
func TestCheckRunAnnotatesACompileErrorAndReruns(t *testing.T) {
	w := newWorld(t)
	w.gh.GrantStatuses(testInstallation)
	w.gh.GrantChecks(testInstallation)
	pid := w.addShooter(t)
	sha := w.shooter.Commit("broken", "Break the build", "Ada Lovelace",
		map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_COMPILE_ERROR=Source/Shooter/Shooter.cpp:12\n"})
	sid := w.addSetting(t, pid, map[string]any{"branch": "broken"})["id"].(string)

	b := w.waitEnded(t, w.trigger(t, pid, sid, ""))
	id := b["id"].(string)
	if b["status"] != "failed" || b["commit"] != sha {
		t.Fatalf("build: %v", b)
	}
	run, ok := w.checkRunOf(t, id)
	if !ok || run.Name != "kiln/Linux-Shipping" || run.HeadSHA != sha || run.Status != "completed" || run.Conclusion != "failure" ||
		run.DetailsURL != w.URL()+"/console/builds/"+id {
		t.Fatalf("check run of %s: %+v (found %v)\nlogs:\n%s", id, run, ok, w.logs.String())
	}
	var found bool
	for _, a := range run.Annotations {
		if a.GetPath() == "Shooter/Source/Shooter/Shooter.cpp" && a.GetStartLine() == 12 && a.GetAnnotationLevel() == "failure" &&
			a.GetMessage() == "use of undeclared identifier 'Undeclared' (fake)" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no annotation on Shooter/Source/Shooter/Shooter.cpp:12 in %+v\nsummary:\n%s", run.Annotations, run.Summary)
	}
	if n := len(w.gh.Statuses()); n != 0 {
		t.Errorf("%d commit statuses beside the check run", n)
	}

	body := fmt.Sprintf(`{"action":"rerequested","check_run":{"id":1,"name":"kiln/Linux-Shipping","head_sha":%q,"external_id":%q},`+
		`"repository":{"full_name":"studio/shooter"},"installation":{"id":%d},"sender":{"login":"octocat"}}`, sha, id, testInstallation)
	r := w.sendPush(t, testWebhookSecret, "d-check-1", "check_run", body)
	started, _ := r.Body["builds"].([]any)
	if r.Status != 202 || len(started) != 1 {
		t.Fatalf("check_run rerequested: %d %s", r.Status, r.Raw)
	}
	rerun := w.do(t, "GET", "/builds/"+started[0].(string), w.token, nil).Body
	trigger, _ := rerun["trigger"].(map[string]any)
	if rerun["rerunOf"] != id || rerun["triggeredBy"] != "github:octocat" || trigger["kind"] != "rerun" || trigger["name"] != "octocat" {
		t.Fatalf("the re-run: %v", rerun)
	}
	if r := w.sendPush(t, testWebhookSecret, "d-check-1", "check_run", body); r.Status != 202 || len(r.Body["builds"].([]any)) != 0 {
		t.Fatalf("a redelivery started builds: %d %s", r.Status, r.Raw)
	}
	if r := w.sendPush(t, testWebhookSecret, "d-check-2", "check_suite", `{"action":"rerequested","installation":{"id":1}}`); r.Status != 200 {
		t.Fatalf("check_suite: %d %s", r.Status, r.Raw)
	}
	again := w.waitEnded(t, started[0].(string))
	if run, ok := w.checkRunOf(t, again["id"].(string)); !ok || run.Conclusion != "failure" || run.HeadSHA != sha {
		t.Fatalf("check run of the re-run: %+v (found %v)", run, ok)
	}
}
