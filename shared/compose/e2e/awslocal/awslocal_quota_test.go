package awslocal

import (
	"net/http"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// TestOrganizationsTakeTurnsAtTheCodeBuildQuota: with the account's CodeBuild quota at two builds
// (KILN_CODEBUILD_QUOTA=2, two hosts), one organization's four builds and then another's one: once
// a host frees while the busy organization holds the other, the other organization's build takes
// its turn before the first's backlog ends (turns per organization, as on kiln serve:
// TestOrganizationsTakeTurns), and all five complete, none failed for the quota.
func TestOrganizationsTakeTurnsAtTheCodeBuildQuota(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal, func(c *serve.Config) { c.Workers = 2 }, e2e.WithCodeBuildQuota(2))
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow builds", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=1\n"})
	w.Shooter.Commit("slower", "Slower builds", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=4\n"})
	var busy []string
	// The second build is slower, so the hosts free one at a time: the first frees one while the
	// busy organization still holds the other.
	for i, buildType := range []string{"Shipping", "Development", "DebugGame", "Test"} { // none supersedes another
		branch := "slow"
		if i == 1 {
			branch = "slower"
		}
		sid := w.AddSetting(t, pid, map[string]any{"branch": branch, "buildType": buildType})["id"].(string)
		busy = append(busy, w.Trigger(t, pid, sid, ""))
	}
	other := e2e.BootstrapOrg(t, w.Server, "Other Studio")
	if r := w.Do(t, "PATCH", "/organizations/"+other.OrgID, other.Token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": "9999"}},
	}); r.Status != http.StatusOK {
		t.Fatalf("link the other organization: %d %s", r.Status, r.Raw)
	}
	r := w.Do(t, "POST", "/projects/add-repo", other.Token, map[string]any{"name": "Secret", "installationId": "9999", "repoFullName": "someone-else/secret"})
	if r.Status != http.StatusCreated {
		t.Fatalf("add-repo: %d %s", r.Status, r.Raw)
	}
	otherProject := e2e.Field(t, r.Body, "id")
	r = w.Do(t, "POST", "/projects/"+otherProject+"/build-settings", other.Token, map[string]any{
		"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main"})
	if r.Status != http.StatusCreated {
		t.Fatalf("other setting: %d %s", r.Status, r.Raw)
	}
	r = w.Do(t, "POST", "/projects/"+otherProject+"/build-settings/"+e2e.Field(t, r.Body, "id")+"/trigger", other.Token, "")
	if r.Status != http.StatusAccepted {
		t.Fatalf("other trigger: %d %s", r.Status, r.Raw)
	}
	theirs := e2e.Field(t, r.Body, "buildId")

	started := map[string]time.Time{}
	for _, id := range busy {
		b := w.WaitEnded(t, id)
		if b["status"] != "complete" {
			t.Fatalf("build %s ended %v (%v)\nlog:\n%s", id, b["status"], b["failureReason"], w.LogText(t, id))
		}
		started[id], _ = time.Parse(time.RFC3339Nano, b["startedAt"].(string))
	}
	var ob map[string]any
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if ob = w.Do(t, "GET", "/builds/"+theirs, other.Token, nil).Body; ob["status"] == "complete" || ob["status"] == "failed" || time.Now().After(deadline) {
			break
		}
	}
	if ob["status"] != "complete" {
		t.Fatalf("the other organization's build: %v", ob)
	}
	otherStarted, _ := time.Parse(time.RFC3339Nano, ob["startedAt"].(string))
	// In the order of the triggers (first come, first served) it would start last, after the
	// busy organization's whole backlog. Waiting builds claim again on their own timers (SlotWait),
	// so the backlog's first build may take a host freed at the same time as the other's.
	if last := busy[len(busy)-1]; !otherStarted.Before(started[last]) {
		t.Errorf("the other organization's build started at %v, after the busy organization's last backlog build %s (%v)", otherStarted, last, started[last])
	}
}
