package perforce

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestPerforceSubmitTriggers(t *testing.T) {
	t.Parallel()
	w := e2e.NewPerforceWorld(t, e2e.Serve)
	push := w.AddSetting(t, w.ProjectID, map[string]any{"branch": nil, "streamPath": "//game/main", "trigger": "push", "buildType": "Development"})["id"].(string)
	w.AddSetting(t, w.ProjectID, map[string]any{"branch": nil, "streamPath": "//game/dev", "trigger": "push"}) // another stream

	// Trigger tokens: admins make them, the secret is shown once.
	tokens := "/organizations/" + w.OrgID + "/perforce/trigger-tokens"
	e2e.WantError(t, w.Do(t, "POST", tokens, e2e.AddUser(t, w.Server, w.OrgID, "member"), `{"name":"helix"}`), 403, "insufficient_scope")
	e2e.WantError(t, w.Do(t, "POST", tokens, w.Token, `{"name":""}`), 400, "validation_failed")
	r := w.Do(t, "POST", tokens, w.Token, `{"name":"helix main"}`)
	secret := e2e.Field(t, r.Body, "token")
	if r.Status != 201 || !strings.HasPrefix(secret, "kilnp4_") || e2e.Field(t, r.Body, "name") != "helix main" || !strings.HasPrefix(secret, e2e.Field(t, r.Body, "hint")) {
		t.Fatalf("create trigger token: %d %s", r.Status, r.Raw)
	}
	tokenID := e2e.Field(t, r.Body, "id")
	list := w.Do(t, "GET", tokens, w.Token, nil)
	if got := e2e.Items(t, list); len(got) != 1 || got[0]["id"] != tokenID || got[0]["token"] != nil || got[0]["lastUsedAt"] != nil || strings.Contains(list.Raw, secret) {
		t.Fatalf("trigger tokens: %s", list.Raw)
	}

	// Only a trigger token opens the door: not none, not an API token, not a made-up one.
	body := `{"stream": "//game/main", "changelist": "11"}`
	for _, tok := range []string{"", w.Token, "kilnp4_" + strings.Repeat("A", 40), secret + "x"} {
		e2e.WantError(t, w.Submit(t, tok, body), 401, "invalid_token")
	}
	for _, bad := range []string{`{"stream": "//game/main"}`, `{"stream": "//game/main/...", "changelist": "11"}`,
		`{"stream": "//game/main", "changelist": "11; reboot"}`, `{"stream": "//game/main", "changelist": 11}`, `[]`} {
		if r := w.Submit(t, secret, bad); r.Status != 400 {
			t.Errorf("submit %s: %d %s", bad, r.Status, r.Raw)
		}
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/builds", w.Token, nil)); len(got) != 0 {
		t.Fatalf("refused submits started builds: %v", got)
	}

	// A submit builds the push settings of that stream, at that changelist; a repeat starts nothing.
	r = w.Submit(t, secret, body)
	started := r.Body["builds"].([]any)
	if r.Status != 202 || len(started) != 1 {
		t.Fatalf("submit: %d %s", r.Status, r.Raw)
	}
	b := w.WaitEnded(t, started[0].(string))
	if b["status"] != "complete" || b["buildSettingId"] != push || b["triggeredBy"] != "push:11" || b["changelist"] != "11" || b["commit"] != "11" {
		t.Fatalf("submit build: %v\nlog:\n%s", b, w.LogText(t, started[0].(string)))
	}
	if r := w.Submit(t, secret, body); r.Status != 202 || len(r.Body["builds"].([]any)) != 0 {
		t.Fatalf("repeated submit: %d %s", r.Status, r.Raw)
	}
	if r := w.Submit(t, secret, `{"stream": "//game/other", "changelist": "12"}`); r.Status != 202 || len(r.Body["builds"].([]any)) != 0 {
		t.Fatalf("submit to a stream nobody builds: %d %s", r.Status, r.Raw)
	}
	if got := e2e.Items(t, w.Do(t, "GET", tokens, w.Token, nil)); got[0]["lastUsedAt"] == nil {
		t.Errorf("lastUsedAt not recorded: %v", got)
	}

	// The shipped trigger script, run as p4d would run it, starts a build of changelist 10.
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := func(args ...string) (string, error) {
		cmd := exec.Command(e2e.RepoPath("scripts", "perforce", "kiln-submit-trigger.sh"), args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "KILN_URL=" + w.URL() + "/", "KILN_TRIGGER_TOKEN_FILE=" + tokenFile,
			"KILN_TRIGGER_CONFIG=" + filepath.Join(dir, "none.conf")}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := script("//game/main", "10"); err != nil {
		t.Fatalf("trigger script: %v\n%s", err, out)
	}
	var fromScript map[string]any
	for _, it := range e2e.Items(t, w.Do(t, "GET", "/builds?buildSettingId="+push, w.Token, nil)) {
		if it["triggeredBy"] == "push:10" {
			fromScript = it
		}
	}
	if fromScript == nil {
		t.Fatal("the trigger script started no build of changelist 10")
	}
	if b := w.WaitEnded(t, fromScript["id"].(string)); b["status"] != "complete" || b["changelist"] != "10" {
		t.Fatalf("script build: %v", b)
	}
	for _, bad := range [][]string{{"//game/main", "10;x"}, {"game/main", "10"}, {`//game/"main`, "10"}, {"//game/main"}} {
		if out, err := script(bad...); err == nil {
			t.Errorf("trigger script accepted %q: %s", bad, out)
		}
	}

	// A revoked token stops working at once, and the script says why.
	if r := w.Do(t, "DELETE", tokens+"/"+tokenID, w.Token, nil); r.Status != 204 {
		t.Fatalf("delete trigger token: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "DELETE", tokens+"/"+tokenID, w.Token, nil), 404, "not_found")
	e2e.WantError(t, w.Submit(t, secret, `{"stream": "//game/main", "changelist": "9"}`), 401, "invalid_token")
	if out, err := script("//game/main", "9"); err == nil || !strings.Contains(out, "invalid_token") {
		t.Errorf("script with a revoked token: %v %s", err, out)
	}
}
