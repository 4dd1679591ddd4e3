package app

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// perforceWorld is a world whose organization has saved credentials for the fake p4 server and a
// Perforce project of the Shooter game on //game/main with one manual Linux setting.
type perforceWorld struct {
	*world
	p4        string // the fake p4; its state is p4 + ".state.json", its argv log p4 + ".log"
	projectID string
	settingID string
}

// p4BuildState is a depot with the Shooter game on //game/main: Version.txt says which
// changelist a workspace holds (the stand-in engine copies it into the artifact).
func p4BuildState() map[string]any {
	return map[string]any{
		"port": "ssl4:127.0.0.1:1666", "ssl": true, "fingerprint": p4Fingerprint,
		"users":   map[string]string{"builder": p4Ticket},
		"streams": []string{"//game/main", "//game/dev"},
		"files": map[string]string{
			"//game/main/Shooter/Shooter.uproject":           shooterUproject,
			"//game/main/Shooter/Source/Shooter/Shooter.cpp": "// game\n",
			"//game/main/Shooter/Source/Version.txt":         "cl-1\n",
		},
		"changes": []map[string]any{
			{"change": 10, "path": "//game/main/...", "desc": "Add the reload animation",
				"files": map[string]string{"//game/main/Shooter/Source/Version.txt": "cl-10\n"}},
			{"change": 11, "path": "//game/main/...", "desc": "Faster reloads\n\n... status pending no more: tuned by design.",
				"files": map[string]string{"//game/main/Shooter/Source/Version.txt": "cl-11\n", "//game/main/Shooter/Source/Shooter/Weapon.cpp": "// reload\n"}},
			{"change": 12, "path": "//game/main/...", "desc": "Work in progress", "pending": true,
				"files": map[string]string{"//game/main/Shooter/Source/Version.txt": "cl-12\n"}},
		},
	}
}

func newPerforceWorld(t *testing.T, configure ...func(*Config)) *perforceWorld {
	t.Helper()
	p4 := fakeP4(t)
	setP4State(t, p4, p4BuildState())
	w := newWorld(t, append([]func(*Config){func(c *Config) {
		c.P4 = p4
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	}}, configure...)...)
	r := w.do(t, "PATCH", "/organizations/"+w.orgID+"/perforce", w.token,
		map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "ticket": p4Ticket})
	if r.Status != 200 {
		t.Fatalf("save credentials: %d %s", r.Status, r.Raw)
	}
	r = w.do(t, "POST", "/projects/add-perforce", w.token, map[string]any{
		"name": "Shooter", "depot": "//game/main", "streamPath": "//game/main", "uprojectPath": "Shooter/Shooter.uproject"})
	if r.Status != 201 {
		t.Fatalf("add-perforce: %d %s", r.Status, r.Raw)
	}
	pid := field(t, r.Body, "id")
	sid := w.addSetting(t, pid, map[string]any{"branch": nil, "streamPath": "//game/main"})["id"].(string)
	return &perforceWorld{world: w, p4: p4, projectID: pid, settingID: sid}
}

// setP4State replaces the fake server's state.
func setP4State(t *testing.T, p4 string, state map[string]any) {
	t.Helper()
	b, _ := json.Marshal(state)
	if err := os.WriteFile(p4+".state.json", b, 0o600); err != nil {
		t.Fatal(err)
	}
	shareWithHosts(t, p4+".state.json", 0o644)
}

// artifactVersion downloads a complete build's artifact and returns its Version.txt.
func (w *perforceWorld) artifactVersion(t *testing.T, buildID string) string {
	t.Helper()
	d := w.do(t, "GET", "/builds/"+buildID+"/download", w.token, nil)
	if d.Status != 200 {
		t.Fatalf("download: %d %s", d.Status, d.Raw)
	}
	data := fetchArtifact(t, field(t, d.Body, "url"))
	for name, content := range tarFiles(t, data) {
		if strings.HasSuffix(name, "/Version.txt") {
			return content
		}
	}
	t.Fatalf("no Version.txt in the artifact: %v", tarEntries(t, data))
	return ""
}

func TestPerforceBuildsFromChangelists(t *testing.T) {
	w := newPerforceWorld(t)

	// No changelist: the latest submitted one (the pending 12 is not).
	id := w.trigger(t, w.projectID, w.settingID, "")
	b := w.waitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build ended %v: %v\nlog:\n%s", b["status"], b["failureReason"], w.logText(t, id))
	}
	if b["commit"] != "11" || b["changelist"] != "11" || b["commitMessage"] != "Faster reloads\n\n... status pending no more: tuned by design." || b["branch"] != "//game/main" {
		t.Fatalf("latest build: %v", b)
	}
	if v := w.artifactVersion(t, id); v != "cl-11\n" {
		t.Fatalf("artifact of the latest changelist holds Version.txt %q", v)
	}
	if log := w.logText(t, id); !strings.Contains(log, "Synced //game/main@11: 4 files changed") {
		t.Errorf("first sync log:\n%s", log)
	}

	// An older changelist, in the same workspace: only what differs is transferred.
	id = w.trigger(t, w.projectID, w.settingID, `{"changelist": "10"}`)
	b = w.waitEnded(t, id)
	if b["status"] != "complete" || b["commit"] != "10" || b["changelist"] != "10" || b["commitMessage"] != "Add the reload animation" {
		t.Fatalf("changelist 10: %v\nlog:\n%s", b, w.logText(t, id))
	}
	if v := w.artifactVersion(t, id); v != "cl-10\n" {
		t.Fatalf("artifact of changelist 10 holds Version.txt %q", v)
	}
	if log := w.logText(t, id); !strings.Contains(log, "Synced //game/main@10: 2 files changed") {
		t.Errorf("incremental sync log:\n%s", log)
	}

	// Changelists that cannot be built fail with a reason, and nothing else happens.
	for _, c := range []struct{ changelist, reason string }{
		{"999", "changelist 999 does not exist on the Perforce server"},
		{"12", "changelist 12 is pending, not submitted"},
	} {
		id = w.trigger(t, w.projectID, w.settingID, `{"changelist": "`+c.changelist+`"}`)
		b = w.waitEnded(t, id)
		if b["status"] != "failed" || !strings.Contains(b["failureReason"].(string), c.reason) {
			t.Errorf("changelist %s: %v %v", c.changelist, b["status"], b["failureReason"])
		}
	}

	// Not a number, or on a GitHub-only field: refused before any build exists.
	wantError(t, w.do(t, "POST", "/projects/"+w.projectID+"/build-settings/"+w.settingID+"/trigger", w.token, `{"changelist": "10; rm -rf /"}`), 400, "validation_failed")
	wantError(t, w.do(t, "POST", "/projects/"+w.projectID+"/build-settings/"+w.settingID+"/trigger", w.token, `{"commit": "abcdef1"}`), 400, "validation_failed")

	// The ticket never reached p4's argv, and every call ran in the organization's private directory.
	logged, _ := os.ReadFile(w.p4 + ".log")
	if !strings.Contains(string(logged), `"sync"`) || strings.Contains(string(logged), p4Ticket) {
		t.Fatalf("p4 log (the ticket must never be in argv):\n%s", logged)
	}
}

func TestPerforceBuildFailures(t *testing.T) {
	w := newPerforceWorld(t)
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
			state := p4BuildState()
			c.change(state)
			setP4State(t, w.p4, state)
			id := w.trigger(t, w.projectID, w.settingID, "")
			b := w.waitEnded(t, id)
			if b["status"] != "failed" || !strings.Contains(b["failureReason"].(string), c.reason) {
				t.Fatalf("build %v: %v, want a reason with %q\nlog:\n%s", b["status"], b["failureReason"], c.reason, w.logText(t, id))
			}
			if strings.Contains(w.logText(t, id), p4Ticket) {
				t.Fatal("the ticket is in the build log")
			}
		})
	}

	// With a new ticket saved and the server back, builds work again.
	setP4State(t, w.p4, p4BuildState())
	id := w.trigger(t, w.projectID, w.settingID, "")
	if b := w.waitEnded(t, id); b["status"] != "complete" {
		t.Fatalf("after recovery: %v %v\nlog:\n%s", b["status"], b["failureReason"], w.logText(t, id))
	}
}

func TestPerforceScheduledBuildsTheLatestChangelist(t *testing.T) {
	t.Parallel() // it waits for the next minute
	w := newPerforceWorld(t)
	sid := w.addSetting(t, w.projectID, map[string]any{"branch": nil, "streamPath": "//game/main", "trigger": "scheduled", "schedule": "* * * * *"})["id"].(string)
	deadline := time.Now().Add(75 * time.Second)
	var got []map[string]any
	for len(got) == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		got = items(t, w.do(t, "GET", "/builds?buildSettingId="+sid, w.token, nil))
	}
	if len(got) == 0 || got[0]["triggeredBy"] != "cron" {
		t.Fatalf("scheduled builds: %v", got)
	}
	b := w.waitEnded(t, got[0]["id"].(string))
	if b["status"] != "complete" || b["changelist"] != "11" || b["commitMessage"] != "Faster reloads\n\n... status pending no more: tuned by design." {
		t.Fatalf("scheduled build: %v\nlog:\n%s", b, w.logText(t, got[0]["id"].(string)))
	}
}

func TestBuildsOfOneStreamTakeTurnsInTheWorkspace(t *testing.T) {
	w := newPerforceWorld(t, func(c *Config) { c.Workers = 2 })
	state := p4BuildState()
	state["files"].(map[string]string)["//game/main/Shooter/FakeUAT.env"] = "FAKE_UAT_SLEEP=1\n"
	setP4State(t, w.p4, state)
	other := w.addSetting(t, w.projectID, map[string]any{"branch": nil, "streamPath": "//game/main", "buildType": "Development"})["id"].(string)
	first := w.trigger(t, w.projectID, w.settingID, "")
	second := w.trigger(t, w.projectID, other, "")
	waited := 0
	for _, id := range []string{first, second} {
		if b := w.waitEnded(t, id); b["status"] != "complete" {
			t.Fatalf("build %s: %v %v\nlog:\n%s", id, b["status"], b["failureReason"], w.logText(t, id))
		}
		if strings.Contains(w.logText(t, id), "Waiting for another build of //game/main to finish with the workspace") {
			waited++
		}
	}
	if waited != 1 {
		t.Fatalf("%d of the two builds waited for the shared workspace, want 1", waited)
	}
}

func TestRemovingPerforceCredentials(t *testing.T) {
	w := newPerforceWorld(t)
	path := "/organizations/" + w.orgID + "/perforce"
	wantError(t, w.do(t, "DELETE", path, addUser(t, w.testService, w.orgID, "member"), nil), 403, "insufficient_scope")
	if r := w.do(t, "DELETE", path, w.token, nil); r.Status != 204 {
		t.Fatalf("delete credentials: %d %s", r.Status, r.Raw)
	}
	if r := w.do(t, "GET", "/organizations/"+w.orgID, w.token, nil); r.Body["perforce"] != nil {
		t.Fatalf("credentials still shown: %s", r.Raw)
	}
	if _, err := os.Stat(filepath.Join(w.cfg.Data, "p4", w.orgID)); !os.IsNotExist(err) {
		t.Errorf("the organization's p4 directory (trusted fingerprint) is still there: %v", err)
	}
	wantError(t, w.do(t, "POST", "/projects/add-perforce", w.token, `{"name":"Dev","depot":"//game/dev","streamPath":"//game/dev"}`), 409, "perforce_not_configured")
	id := w.trigger(t, w.projectID, w.settingID, "")
	if b := w.waitEnded(t, id); b["status"] != "failed" || !strings.Contains(b["failureReason"].(string), "Perforce is not configured for the organization") {
		t.Fatalf("build without credentials: %v %v", b["status"], b["failureReason"])
	}

	// Saved again, builds work again.
	if r := w.do(t, "PATCH", path, w.token, map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "ticket": p4Ticket}); r.Status != 200 {
		t.Fatalf("save again: %d %s", r.Status, r.Raw)
	}
	id = w.trigger(t, w.projectID, w.settingID, "")
	if b := w.waitEnded(t, id); b["status"] != "complete" {
		t.Fatalf("build after saving again: %v %v\nlog:\n%s", b["status"], b["failureReason"], w.logText(t, id))
	}
}
