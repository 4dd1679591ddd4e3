package app

import (
	"os"
	"strings"
	"testing"
	"time"
)

// sendEvent delivers a payload of testdata/github as event, signed, with AFTER replaced by after.
func (w *world) sendEvent(t *testing.T, event, file, after string) response {
	t.Helper()
	body, err := os.ReadFile("testdata/github/" + file)
	if err != nil {
		t.Fatal(err)
	}
	r := w.sendPush(t, testWebhookSecret, "d-"+file, event, strings.ReplaceAll(string(body), "AFTER", after))
	if r.Status/100 != 2 {
		t.Fatalf("%s: %d %s", file, r.Status, r.Raw)
	}
	return r
}

func (w *world) wantFailure(t *testing.T, pid, sid, reason string) {
	t.Helper()
	b := w.waitEnded(t, w.trigger(t, pid, sid, ""))
	if b["status"] != "failed" || !strings.Contains(b["failureReason"].(string), reason) {
		t.Fatalf("build: want failed with %q, got %v", reason, b)
	}
}

func TestGitHubAppLifecycleFailsBuildsClearly(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, map[string]any{"trigger": "push", "branch": "dev"})["id"].(string)

	// A push whose repository dates are epoch seconds, as GitHub sends them in push events.
	sha := w.shooter.Commit("dev", "Pushed", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "pushed\n"})
	r := w.sendEvent(t, "push", "push_numeric_dates.json", sha)
	if started, _ := r.Body["builds"].([]any); len(started) != 1 || w.waitEnded(t, started[0].(string))["status"] != "complete" {
		t.Fatalf("push: %s", r.Raw)
	}

	w.gh.SuspendInstallation(testInstallation, true)
	w.sendEvent(t, "installation", "installation_suspend.json", "")
	w.wantFailure(t, pid, sid, "GitHub App installation is suspended")
	w.gh.SuspendInstallation(testInstallation, false)
	w.sendEvent(t, "installation", "installation_unsuspend.json", "")
	if b := w.waitEnded(t, w.trigger(t, pid, sid, "")); b["status"] != "complete" {
		t.Fatalf("build after unsuspend: %v", b)
	}

	w.gh.RemoveRepo("studio/shooter")
	w.sendEvent(t, "installation_repositories", "installation_repositories_removed.json", "")
	w.wantFailure(t, pid, sid, "the repository studio/shooter was removed from the GitHub App installation")

	w.gh.RemoveInstallation(testInstallation)
	w.sendEvent(t, "installation", "installation_deleted.json", "")
	// The organization loses it (the API reuses a resolved token's organization for a few seconds).
	deadline := time.Now().Add(30 * time.Second)
	for strings.Contains(w.do(t, "GET", "/organizations/"+w.orgID, w.token, nil).Raw, `"installationId":"4242"`) {
		if time.Now().After(deadline) {
			t.Fatal("the organization still links the deleted installation")
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.wantFailure(t, pid, sid, "GitHub App was uninstalled")
}
