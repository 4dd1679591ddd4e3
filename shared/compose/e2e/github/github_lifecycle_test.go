package github

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestGitHubAppLifecycleFailsBuildsClearly(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"trigger": "push", "branch": "dev"})["id"].(string)

	// A push whose repository dates are epoch seconds, as GitHub sends them in push events.
	sha := w.Shooter.Commit("dev", "Pushed", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "pushed\n"})
	r := w.SendEvent(t, "push", "push_numeric_dates.json", sha)
	if started, _ := r.Body["builds"].([]any); len(started) != 1 || w.WaitEnded(t, started[0].(string))["status"] != "complete" {
		t.Fatalf("push: %s", r.Raw)
	}

	w.GitHub.SuspendInstallation(e2e.InstallationID, true)
	w.SendEvent(t, "installation", "installation_suspend.json", "")
	w.WantFailure(t, pid, sid, "GitHub App installation is suspended")
	w.GitHub.SuspendInstallation(e2e.InstallationID, false)
	w.SendEvent(t, "installation", "installation_unsuspend.json", "")
	if b := w.WaitEnded(t, w.Trigger(t, pid, sid, "")); b["status"] != "complete" {
		t.Fatalf("build after unsuspend: %v", b)
	}

	w.GitHub.RemoveRepo("studio/shooter")
	w.SendEvent(t, "installation_repositories", "installation_repositories_removed.json", "")
	w.WantFailure(t, pid, sid, "the repository studio/shooter was removed from the GitHub App installation")

	w.GitHub.RemoveInstallation(e2e.InstallationID)
	w.SendEvent(t, "installation", "installation_deleted.json", "")
	// The organization loses it (the API reuses a resolved token's organization for a few seconds).
	deadline := time.Now().Add(30 * time.Second)
	for strings.Contains(w.Do(t, "GET", "/organizations/"+w.OrgID, w.Token, nil).Raw, `"installationId":"4242"`) {
		if time.Now().After(deadline) {
			t.Fatal("the organization still links the deleted installation")
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.WantFailure(t, pid, sid, "GitHub App was uninstalled")
}
