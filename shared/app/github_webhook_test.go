package app

import (
	"fmt"
	"testing"
)

// TestReplayedPushStartsNothing: a recorded push delivery sent again under a new delivery id, even
// after a restart, starts no build; a push of another commit does.
func TestReplayedPushStartsNothing(t *testing.T) {
	w := newWorld(t)
	pid := w.addShooter(t)
	push := w.addSetting(t, pid, map[string]any{"trigger": "push", "branch": "dev"})["id"].(string)
	pushBody := func(sha string) string {
		return fmt.Sprintf(`{"ref":"refs/heads/dev","after":%q,"deleted":false,"repository":{"full_name":"studio/shooter"},"installation":{"id":%d}}`, sha, testInstallation)
	}
	started := func(r response) int {
		t.Helper()
		if r.Status != 202 {
			t.Fatalf("push: %d %s", r.Status, r.Raw)
		}
		return len(r.Body["builds"].([]any))
	}
	sha := w.shooter.Commit("dev", "Pushed", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "one\n"})
	body := pushBody(sha)
	if n := started(w.sendPush(t, testWebhookSecret, "d-1", "push", body)); n != 1 {
		t.Fatalf("first push started %d builds", n)
	}
	if n := started(w.sendPush(t, testWebhookSecret, "d-replay-1", "push", body)); n != 0 {
		t.Fatalf("a replay under a new delivery id started %d builds", n)
	}
	w.restart(t)
	if n := started(w.sendPush(t, testWebhookSecret, "d-replay-2", "push", body)); n != 0 {
		t.Fatalf("a replay after a restart started %d builds", n)
	}
	next := w.shooter.Commit("dev", "Pushed again", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "two\n"})
	if n := started(w.sendPush(t, testWebhookSecret, "d-2", "push", pushBody(next))); n != 1 {
		t.Fatalf("a push of a new commit started %d builds", n)
	}
	if got := items(t, w.do(t, "GET", "/builds?buildSettingId="+push, w.token, nil)); len(got) != 2 {
		t.Fatalf("builds of the push setting: %d, want 2", len(got))
	}
}

// TestServerHasReadTimeouts: kiln serve's HTTP server bounds how long a client may take to send
// its headers and its whole request, and how long an idle connection stays open.
func TestServerHasReadTimeouts(t *testing.T) {
	ts := startService(t, testConfig(t, t.TempDir()))
	srv := ts.server
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 || srv.ReadTimeout < srv.ReadHeaderTimeout {
		t.Fatalf("timeouts: header %v, request %v, idle %v", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout)
	}
	if srv.WriteTimeout != 0 {
		t.Fatalf("WriteTimeout %v would cut log follow streams", srv.WriteTimeout)
	}
}
