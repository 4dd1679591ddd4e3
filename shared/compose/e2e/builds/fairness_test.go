package builds

import (
	"net/http"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestOrganizationsTakeTurns queues three builds of one organization and then one of another on a
// one-worker service: the second organization's build runs next, before the first's backlog.
func TestOrganizationsTakeTurns(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve) // one worker
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow builds", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=0.5\n"})
	var a []string
	for _, platform := range []string{"Linux", "Win64", "Android"} { // three platforms: none supersedes another
		a = append(a, w.AddSetting(t, pid, map[string]any{"branch": "slow", "platform": platform})["id"].(string))
	}

	other := e2e.BootstrapOrg(t, w.Server, "Other Studio")
	if r := w.Do(t, "PATCH", "/organizations/"+other.OrgID, other.Token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": "9999"}},
	}); r.Status != http.StatusOK {
		t.Fatalf("link the other organization: %d %s", r.Status, r.Raw)
	}
	r := w.Do(t, "POST", "/projects/add-repo", other.Token, map[string]any{
		"name": "Secret", "installationId": "9999", "repoFullName": "someone-else/secret",
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("add-repo: %d %s", r.Status, r.Raw)
	}
	otherProject := e2e.Field(t, r.Body, "id")
	r = w.Do(t, "POST", "/projects/"+otherProject+"/build-settings", other.Token, map[string]any{
		"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main",
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("other setting: %d %s", r.Status, r.Raw)
	}
	otherSetting := e2e.Field(t, r.Body, "id")

	first := w.Trigger(t, pid, a[0], "")
	w.WaitStatus(t, first, "running")
	second, third := w.Trigger(t, pid, a[1], ""), w.Trigger(t, pid, a[2], "")
	r = w.Do(t, "POST", "/projects/"+otherProject+"/build-settings/"+otherSetting+"/trigger", other.Token, "")
	if r.Status != http.StatusAccepted {
		t.Fatalf("other trigger: %d %s", r.Status, r.Raw)
	}
	theirs := e2e.Field(t, r.Body, "buildId")
	if b := w.Do(t, "GET", "/builds/"+first, w.Token, nil); b.Body["status"] != "running" {
		t.Fatalf("the first build ended before the queue was filled; the test needs it running: %v", b.Body)
	}

	started := map[string]time.Time{}
	for _, id := range []string{first, second, third} {
		b := w.WaitEnded(t, id)
		if b["status"] != "complete" {
			t.Fatalf("build %s: %v", id, b)
		}
		started[id], _ = time.Parse(time.RFC3339Nano, b["startedAt"].(string))
	}
	var ob map[string]any
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp := w.Do(t, "GET", "/builds/"+theirs, other.Token, nil)
		if ob = resp.Body; ob["status"] == "complete" || ob["status"] == "failed" || time.Now().After(deadline) {
			break
		}
	}
	if ob["status"] != "complete" {
		t.Fatalf("the other organization's build: %v", ob)
	}
	otherStarted, _ := time.Parse(time.RFC3339Nano, ob["startedAt"].(string))
	if !otherStarted.Before(started[second]) || !otherStarted.After(started[first]) {
		t.Errorf("the other organization's build started at %v; want between the first (%v) and the second (%v) of the busy organization's",
			otherStarted, started[first], started[second])
	}
}
