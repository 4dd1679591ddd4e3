package github

import (
	"fmt"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// With Checks: write, a build failing with a compile error is a failed check run with the error
// annotated on its file and line; GitHub's "Re-run" of the check run re-runs the build.
func TestCheckRunAnnotatesACompileErrorAndReruns(t *testing.T) {
	e2e.Both(t, checkRunAnnotatesACompileErrorAndReruns)
}

func checkRunAnnotatesACompileErrorAndReruns(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	w.GitHub.GrantStatuses(e2e.InstallationID)
	w.GitHub.GrantChecks(e2e.InstallationID)
	pid := w.AddShooter(t)
	sha := w.Shooter.Commit("broken", "Break the build", "Ada Lovelace",
		map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_COMPILE_ERROR=Source/Shooter/Shooter.cpp:12\n"})
	sid := w.AddSetting(t, pid, map[string]any{"branch": "broken"})["id"].(string)

	b := w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	id := b["id"].(string)
	if b["status"] != "failed" || b["commit"] != sha {
		t.Fatalf("build: %v", b)
	}
	run, ok := w.CheckRunOf(t, id)
	if !ok || run.Name != "kiln/Linux-Shipping" || run.HeadSHA != sha || run.Status != "completed" || run.Conclusion != "failure" ||
		run.DetailsURL != w.URL()+"/console/builds/"+id {
		t.Fatalf("check run of %s: %+v (found %v)\nlogs:\n%s", id, run, ok, w.Logs.String())
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
	if n := len(w.GitHub.Statuses()); n != 0 {
		t.Errorf("%d commit statuses beside the check run", n)
	}

	body := fmt.Sprintf(`{"action":"rerequested","check_run":{"id":1,"name":"kiln/Linux-Shipping","head_sha":%q,"external_id":%q},`+
		`"repository":{"full_name":"studio/shooter"},"installation":{"id":%d},"sender":{"login":"octocat"}}`, sha, id, e2e.InstallationID)
	r := w.SendPush(t, e2e.WebhookSecret, "d-check-1", "check_run", body)
	started, _ := r.Body["builds"].([]any)
	if r.Status != 202 || len(started) != 1 {
		t.Fatalf("check_run rerequested: %d %s", r.Status, r.Raw)
	}
	rerun := w.Do(t, "GET", "/builds/"+started[0].(string), w.Token, nil).Body
	trigger, _ := rerun["trigger"].(map[string]any)
	if rerun["rerunOf"] != id || rerun["triggeredBy"] != "github:octocat" || trigger["kind"] != "rerun" || trigger["name"] != "octocat" {
		t.Fatalf("the re-run: %v", rerun)
	}
	if r := w.SendPush(t, e2e.WebhookSecret, "d-check-1", "check_run", body); r.Status != 202 || len(r.Body["builds"].([]any)) != 0 {
		t.Fatalf("a redelivery started builds: %d %s", r.Status, r.Raw)
	}
	if r := w.SendPush(t, e2e.WebhookSecret, "d-check-2", "check_suite", `{"action":"rerequested","installation":{"id":1}}`); r.Status != 200 {
		t.Fatalf("check_suite: %d %s", r.Status, r.Raw)
	}
	again := w.WaitEnded(t, started[0].(string))
	if run, ok := w.CheckRunOf(t, again["id"].(string)); !ok || run.Conclusion != "failure" || run.HeadSHA != sha {
		t.Fatalf("check run of the re-run: %+v (found %v)", run, ok)
	}
}
