package github

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestPushWebhookStartsBuilds(t *testing.T) { e2e.Both(t, pushWebhookStartsBuilds) }

func pushWebhookStartsBuilds(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	push := w.AddSetting(t, pid, map[string]any{"trigger": "push", "branch": "dev"})["id"].(string)
	w.AddSetting(t, pid, map[string]any{"trigger": "manual", "branch": "dev"})
	sha := w.Shooter.Commit("dev", "Pushed", "Grace Hopper", map[string]string{"Shooter/Source/Version.txt": "pushed\n"})
	body := fmt.Sprintf(`{"ref":"refs/heads/dev","after":%q,"deleted":false,"repository":{"full_name":"Studio/Shooter"},"installation":{"id":%d}}`, sha, e2e.InstallationID)

	e2e.WantError(t, w.SendPush(t, "", "d-1", "push", body), 401, "invalid_token")
	e2e.WantError(t, w.SendPush(t, "wrong-secret", "d-1", "push", body), 401, "invalid_token")
	if r := w.SendPush(t, e2e.WebhookSecret, "d-0", "ping", `{"zen":"Keep it logically awesome."}`); r.Status != 200 {
		t.Fatalf("ping: %d %s", r.Status, r.Raw)
	}
	r := w.SendPush(t, e2e.WebhookSecret, "d-1", "push", body)
	started, _ := r.Body["builds"].([]any)
	if r.Status != 202 || len(started) != 1 {
		t.Fatalf("push: %d %s", r.Status, r.Raw)
	}
	id := started[0].(string)
	b := w.WaitEnded(t, id)
	if b["triggeredBy"] != "push:"+sha || b["commit"] != sha || b["buildSettingId"] != push || b["status"] != "complete" {
		t.Fatalf("push build: %v", b)
	}
	if r := w.SendPush(t, e2e.WebhookSecret, "d-1", "push", body); r.Status != 202 || len(r.Body["builds"].([]any)) != 0 {
		t.Fatalf("redelivery started builds: %s", r.Raw)
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+push, w.Token, nil)); len(got) != 1 {
		t.Fatalf("builds of the push setting: %d", len(got))
	}
	other := strings.Replace(body, "refs/heads/dev", "refs/heads/main", 1)
	if r := w.SendPush(t, e2e.WebhookSecret, "d-2", "push", other); len(r.Body["builds"].([]any)) != 0 {
		t.Fatalf("a push to another branch started builds: %s", r.Raw)
	}
}

func TestScheduledBuildsFireOncePerSlot(t *testing.T) {
	e2e.Both(t, scheduledBuildsFireOncePerSlot)
}

func scheduledBuildsFireOncePerSlot(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep, e2e.ToTheNextMinute)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"trigger": "scheduled", "schedule": "* * * * *"})["id"].(string)
	// The scheduler checks every 100 ms in tests, a minute ahead: the first slot is due at once.
	deadline := time.Now().Add(75 * time.Second)
	var got []map[string]any
	for time.Now().Before(deadline) {
		got = e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+sid, w.Token, nil))
		if len(got) > 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(got) != 1 || got[0]["triggeredBy"] != "cron" {
		t.Fatalf("scheduled builds: %v", got)
	}
	slot := got[0]["createdAt"].(string)[:16] // the minute
	time.Sleep(500 * time.Millisecond)        // several more checks within the same slot
	w.Restart(t)                              // and a restart: the slot still fires once
	time.Sleep(500 * time.Millisecond)
	for _, b := range e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+sid, w.Token, nil)) {
		if b["id"] != got[0]["id"] && b["createdAt"].(string)[:16] == slot {
			t.Fatalf("the slot %s fired twice", slot)
		}
	}
}
