package github

import (
	"fmt"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestReplayedPushStartsNothing: a recorded push delivery sent again under a new delivery id, even
// after a restart, starts no build; a push of another commit does.
func TestReplayedPushStartsNothing(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	push := w.AddSetting(t, pid, map[string]any{"trigger": "push", "branch": "dev"})["id"].(string)
	pushBody := func(sha string) string {
		return fmt.Sprintf(`{"ref":"refs/heads/dev","after":%q,"deleted":false,"repository":{"full_name":"studio/shooter"},"installation":{"id":%d}}`, sha, e2e.InstallationID)
	}
	started := func(r e2e.Response) int {
		t.Helper()
		if r.Status != 202 {
			t.Fatalf("push: %d %s", r.Status, r.Raw)
		}
		return len(r.Body["builds"].([]any))
	}
	sha := w.Shooter.Commit("dev", "Pushed", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "one\n"})
	body := pushBody(sha)
	if n := started(w.SendPush(t, e2e.WebhookSecret, "d-1", "push", body)); n != 1 {
		t.Fatalf("first push started %d builds", n)
	}
	if n := started(w.SendPush(t, e2e.WebhookSecret, "d-replay-1", "push", body)); n != 0 {
		t.Fatalf("a replay under a new delivery id started %d builds", n)
	}
	w.Restart(t)
	if n := started(w.SendPush(t, e2e.WebhookSecret, "d-replay-2", "push", body)); n != 0 {
		t.Fatalf("a replay after a restart started %d builds", n)
	}
	next := w.Shooter.Commit("dev", "Pushed again", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "two\n"})
	if n := started(w.SendPush(t, e2e.WebhookSecret, "d-2", "push", pushBody(next))); n != 1 {
		t.Fatalf("a push of a new commit started %d builds", n)
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+push, w.Token, nil)); len(got) != 2 {
		t.Fatalf("builds of the push setting: %d, want 2", len(got))
	}
}
