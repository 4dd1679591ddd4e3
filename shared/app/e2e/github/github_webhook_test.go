package github

import (
	"fmt"
	"testing"

	"github.com/kilnbuild/kiln/shared/app/apptest"
)

// TestReplayedPushStartsNothing: a recorded push delivery sent again under a new delivery id, even
// after a restart, starts no build; a push of another commit does.
func TestReplayedPushStartsNothing(t *testing.T) {
	t.Parallel()
	w := apptest.NewWorld(t, apptest.Serve)
	pid := w.AddShooter(t)
	push := w.AddSetting(t, pid, map[string]any{"trigger": "push", "branch": "dev"})["id"].(string)
	pushBody := func(sha string) string {
		return fmt.Sprintf(`{"ref":"refs/heads/dev","after":%q,"deleted":false,"repository":{"full_name":"studio/shooter"},"installation":{"id":%d}}`, sha, apptest.InstallationID)
	}
	started := func(r apptest.Response) int {
		t.Helper()
		if r.Status != 202 {
			t.Fatalf("push: %d %s", r.Status, r.Raw)
		}
		return len(r.Body["builds"].([]any))
	}
	sha := w.Shooter.Commit("dev", "Pushed", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "one\n"})
	body := pushBody(sha)
	if n := started(w.SendPush(t, apptest.WebhookSecret, "d-1", "push", body)); n != 1 {
		t.Fatalf("first push started %d builds", n)
	}
	if n := started(w.SendPush(t, apptest.WebhookSecret, "d-replay-1", "push", body)); n != 0 {
		t.Fatalf("a replay under a new delivery id started %d builds", n)
	}
	w.Restart(t)
	if n := started(w.SendPush(t, apptest.WebhookSecret, "d-replay-2", "push", body)); n != 0 {
		t.Fatalf("a replay after a restart started %d builds", n)
	}
	next := w.Shooter.Commit("dev", "Pushed again", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "two\n"})
	if n := started(w.SendPush(t, apptest.WebhookSecret, "d-2", "push", pushBody(next))); n != 1 {
		t.Fatalf("a push of a new commit started %d builds", n)
	}
	if got := apptest.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+push, w.Token, nil)); len(got) != 2 {
		t.Fatalf("builds of the push setting: %d, want 2", len(got))
	}
}
