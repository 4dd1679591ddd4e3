package perforce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

func TestPerforceBuildsFromChangelists(t *testing.T) {
	t.Parallel()
	w := e2e.NewPerforceWorld(t, e2e.Serve)

	// No changelist: the latest submitted one (the pending 12 is not).
	id := w.Trigger(t, w.ProjectID, w.SettingID, "")
	b := w.WaitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build ended %v: %v\nlog:\n%s", b["status"], b["failureReason"], w.LogText(t, id))
	}
	if b["commit"] != "11" || b["changelist"] != "11" || b["commitMessage"] != "Faster reloads\n\n... status pending no more: tuned by design." || b["branch"] != "//game/main" {
		t.Fatalf("latest build: %v", b)
	}
	if v := w.ArtifactVersion(t, id); v != "cl-11\n" {
		t.Fatalf("artifact of the latest changelist holds Version.txt %q", v)
	}
	if log := w.LogText(t, id); !strings.Contains(log, "Synced //game/main@11: 4 files changed") {
		t.Errorf("first sync log:\n%s", log)
	}

	// An older changelist, in the same workspace: only what differs is transferred.
	id = w.Trigger(t, w.ProjectID, w.SettingID, `{"changelist": "10"}`)
	b = w.WaitEnded(t, id)
	if b["status"] != "complete" || b["commit"] != "10" || b["changelist"] != "10" || b["commitMessage"] != "Add the reload animation" {
		t.Fatalf("changelist 10: %v\nlog:\n%s", b, w.LogText(t, id))
	}
	if v := w.ArtifactVersion(t, id); v != "cl-10\n" {
		t.Fatalf("artifact of changelist 10 holds Version.txt %q", v)
	}
	if log := w.LogText(t, id); !strings.Contains(log, "Synced //game/main@10: 2 files changed") {
		t.Errorf("incremental sync log:\n%s", log)
	}

	// Changelists that cannot be built fail with a reason, and nothing else happens.
	for _, c := range []struct{ changelist, reason string }{
		{"999", "changelist 999 does not exist on the Perforce server"},
		{"12", "changelist 12 is pending, not submitted"},
	} {
		id = w.Trigger(t, w.ProjectID, w.SettingID, `{"changelist": "`+c.changelist+`"}`)
		b = w.WaitEnded(t, id)
		if b["status"] != "failed" || !strings.Contains(b["failureReason"].(string), c.reason) {
			t.Errorf("changelist %s: %v %v", c.changelist, b["status"], b["failureReason"])
		}
	}

	// Not a number, or on a GitHub-only field: refused before any build exists.
	e2e.WantError(t, w.Do(t, "POST", "/projects/"+w.ProjectID+"/build-settings/"+w.SettingID+"/trigger", w.Token, `{"changelist": "10; rm -rf /"}`), 400, "validation_failed")
	e2e.WantError(t, w.Do(t, "POST", "/projects/"+w.ProjectID+"/build-settings/"+w.SettingID+"/trigger", w.Token, `{"commit": "abcdef1"}`), 400, "validation_failed")

	// The ticket never reached p4's argv, and every call ran in the organization's private directory.
	logged, _ := os.ReadFile(w.P4 + ".log")
	if !strings.Contains(string(logged), `"sync"`) || strings.Contains(string(logged), e2e.P4Ticket) {
		t.Fatalf("p4 log (the ticket must never be in argv):\n%s", logged)
	}
}

func TestPerforceBuildFailures(t *testing.T) {
	t.Parallel()
	w := e2e.NewPerforceWorld(t, e2e.Serve)
	cases := []struct {
		name   string
		change func(state map[string]any)
		reason string
	}{
		{"expired ticket", func(s map[string]any) { s["expired"] = true },
			"the Perforce server refused the saved credentials (has the ticket expired?)"},
		{"stream deleted", func(s map[string]any) { s["streams"] = []string{"//game/dev"} },
			"the stream //game/main does not exist on the Perforce server"},
		{"server down", func(s map[string]any) { s["unreachable"] = true },
			"could not be reached"},
		{"fingerprint changed", func(s map[string]any) {
			s["fingerprint"] = "11:22:33:44:55:66:77:88:99:00:11:22:33:44:55:66:77:88:99:00"
		}, "fingerprint changed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := e2e.P4BuildState()
			c.change(state)
			e2e.SetP4State(t, w.Deployment, w.P4, state)
			id := w.Trigger(t, w.ProjectID, w.SettingID, "")
			b := w.WaitEnded(t, id)
			if b["status"] != "failed" || !strings.Contains(b["failureReason"].(string), c.reason) {
				t.Fatalf("build %v: %v, want a reason with %q\nlog:\n%s", b["status"], b["failureReason"], c.reason, w.LogText(t, id))
			}
			if strings.Contains(w.LogText(t, id), e2e.P4Ticket) {
				t.Fatal("the ticket is in the build log")
			}
		})
	}

	// With a new ticket saved and the server back, builds work again.
	e2e.SetP4State(t, w.Deployment, w.P4, e2e.P4BuildState())
	id := w.Trigger(t, w.ProjectID, w.SettingID, "")
	if b := w.WaitEnded(t, id); b["status"] != "complete" {
		t.Fatalf("after recovery: %v %v\nlog:\n%s", b["status"], b["failureReason"], w.LogText(t, id))
	}
}

func TestPerforceScheduledBuildsTheLatestChangelist(t *testing.T) {
	t.Parallel()
	w := e2e.NewPerforceWorld(t, e2e.Serve, e2e.ToTheNextMinute)
	sid := w.AddSetting(t, w.ProjectID, map[string]any{"branch": nil, "streamPath": "//game/main", "trigger": "scheduled", "schedule": "* * * * *"})["id"].(string)
	deadline := time.Now().Add(75 * time.Second)
	var got []map[string]any
	for len(got) == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		got = e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+sid, w.Token, nil))
	}
	if len(got) == 0 || got[0]["triggeredBy"] != "cron" {
		t.Fatalf("scheduled builds: %v", got)
	}
	b := w.WaitEnded(t, got[0]["id"].(string))
	if b["status"] != "complete" || b["changelist"] != "11" || b["commitMessage"] != "Faster reloads\n\n... status pending no more: tuned by design." {
		t.Fatalf("scheduled build: %v\nlog:\n%s", b, w.LogText(t, got[0]["id"].(string)))
	}
}

func TestBuildsOfOneStreamTakeTurnsInTheWorkspace(t *testing.T) {
	t.Parallel()
	w := e2e.NewPerforceWorld(t, e2e.Serve, func(c *serve.Config) { c.Workers = 2 })
	state := e2e.P4BuildState()
	state["files"].(map[string]string)["//game/main/Shooter/FakeUAT.env"] = "FAKE_UAT_SLEEP=1\n"
	e2e.SetP4State(t, w.Deployment, w.P4, state)
	other := w.AddSetting(t, w.ProjectID, map[string]any{"branch": nil, "streamPath": "//game/main", "buildType": "Development"})["id"].(string)
	first := w.Trigger(t, w.ProjectID, w.SettingID, "")
	second := w.Trigger(t, w.ProjectID, other, "")
	waited := 0
	for _, id := range []string{first, second} {
		if b := w.WaitEnded(t, id); b["status"] != "complete" {
			t.Fatalf("build %s: %v %v\nlog:\n%s", id, b["status"], b["failureReason"], w.LogText(t, id))
		}
		if strings.Contains(w.LogText(t, id), "Waiting for another build of //game/main to finish with the workspace") {
			waited++
		}
	}
	if waited != 1 {
		t.Fatalf("%d of the two builds waited for the shared workspace, want 1", waited)
	}
}

func TestRemovingPerforceCredentials(t *testing.T) {
	t.Parallel()
	w := e2e.NewPerforceWorld(t, e2e.Serve)
	path := "/organizations/" + w.OrgID + "/perforce"
	e2e.WantError(t, w.Do(t, "DELETE", path, e2e.AddUser(t, w.Server, w.OrgID, "member"), nil), 403, "insufficient_scope")
	if r := w.Do(t, "DELETE", path, w.Token, nil); r.Status != 204 {
		t.Fatalf("delete credentials: %d %s", r.Status, r.Raw)
	}
	if r := w.Do(t, "GET", "/organizations/"+w.OrgID, w.Token, nil); r.Body["perforce"] != nil {
		t.Fatalf("credentials still shown: %s", r.Raw)
	}
	if _, err := os.Stat(filepath.Join(w.Config.Data, "p4", w.OrgID)); !os.IsNotExist(err) {
		t.Errorf("the organization's p4 directory (trusted fingerprint) is still there: %v", err)
	}
	e2e.WantError(t, w.Do(t, "POST", "/projects/add-perforce", w.Token, `{"name":"Dev","depot":"//game/dev","streamPath":"//game/dev"}`), 409, "perforce_not_configured")
	id := w.Trigger(t, w.ProjectID, w.SettingID, "")
	if b := w.WaitEnded(t, id); b["status"] != "failed" || !strings.Contains(b["failureReason"].(string), "Perforce is not configured for the organization") {
		t.Fatalf("build without credentials: %v %v", b["status"], b["failureReason"])
	}

	// Saved again, builds work again.
	if r := w.Do(t, "PATCH", path, w.Token, map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "ticket": e2e.P4Ticket}); r.Status != 200 {
		t.Fatalf("save again: %d %s", r.Status, r.Raw)
	}
	id = w.Trigger(t, w.ProjectID, w.SettingID, "")
	if b := w.WaitEnded(t, id); b["status"] != "complete" {
		t.Fatalf("build after saving again: %v %v\nlog:\n%s", b["status"], b["failureReason"], w.LogText(t, id))
	}
}
