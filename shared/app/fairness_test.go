package app

import (
	"net/http"
	"testing"
	"time"
)

// TestOrganizationsTakeTurns queues three builds of one organization and then one of another on a
// one-worker service: the second organization's build runs next, before the first's backlog.
func TestOrganizationsTakeTurns(t *testing.T) {
	w := newWorld(t) // one worker
	pid := w.addShooter(t)
	w.shooter.Commit("slow", "Slow builds", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=0.5\n"})
	var a []string
	for _, platform := range []string{"Linux", "Win64", "Android"} { // three platforms: none supersedes another
		a = append(a, w.addSetting(t, pid, map[string]any{"branch": "slow", "platform": platform})["id"].(string))
	}

	other := bootstrapOrg(t, w.testService, "Other Studio")
	if r := w.do(t, "PATCH", "/organizations/"+other.orgID, other.token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": "9999"}},
	}); r.Status != http.StatusOK {
		t.Fatalf("link the other organization: %d %s", r.Status, r.Raw)
	}
	r := w.do(t, "POST", "/projects/add-repo", other.token, map[string]any{
		"name": "Secret", "installationId": "9999", "repoFullName": "someone-else/secret",
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("add-repo: %d %s", r.Status, r.Raw)
	}
	otherProject := field(t, r.Body, "id")
	r = w.do(t, "POST", "/projects/"+otherProject+"/build-settings", other.token, map[string]any{
		"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main",
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("other setting: %d %s", r.Status, r.Raw)
	}
	otherSetting := field(t, r.Body, "id")

	first := w.trigger(t, pid, a[0], "")
	w.waitStatus(t, first, "running")
	second, third := w.trigger(t, pid, a[1], ""), w.trigger(t, pid, a[2], "")
	r = w.do(t, "POST", "/projects/"+otherProject+"/build-settings/"+otherSetting+"/trigger", other.token, "")
	if r.Status != http.StatusAccepted {
		t.Fatalf("other trigger: %d %s", r.Status, r.Raw)
	}
	theirs := field(t, r.Body, "buildId")
	if b := w.do(t, "GET", "/builds/"+first, w.token, nil); b.Body["status"] != "running" {
		t.Fatalf("the first build ended before the queue was filled; the test needs it running: %v", b.Body)
	}

	started := map[string]time.Time{}
	for _, id := range []string{first, second, third} {
		b := w.waitEnded(t, id)
		if b["status"] != "complete" {
			t.Fatalf("build %s: %v", id, b)
		}
		started[id], _ = time.Parse(time.RFC3339Nano, b["startedAt"].(string))
	}
	var ob map[string]any
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp := w.do(t, "GET", "/builds/"+theirs, other.token, nil)
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
