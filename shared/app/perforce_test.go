package app

import (
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	p4Ticket      = "6F1C0C3E9B0D4A2F8E7D6C5B4A392817"
	p4Fingerprint = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01"
)

// fakeP4 builds the fake p4 of testdata beside its state file and returns its path.
func fakeP4(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "p4")
	if out, err := exec.Command("go", "build", "-o", bin, "../../testdata/fakep4").CombinedOutput(); err != nil {
		t.Fatalf("build the fake p4: %v\n%s", err, out)
	}
	state := map[string]any{
		"port": "ssl4:127.0.0.1:1666", "ssl": true, "fingerprint": p4Fingerprint,
		"users":   map[string]string{"builder": p4Ticket},
		"streams": []string{"//game/main"},
		"files": map[string]string{
			"//game/main/Shooter/Shooter.uproject": `{"EngineAssociation": "5.3", "Modules": [{"Name": "Shooter", "Type": "Runtime", "LoadingPhase": "Default"}]}`,
			"//game/main/Tools/Editor.uproject":    `{"EngineAssociation": "5.3"}`,
		},
	}
	b, _ := json.Marshal(state)
	if err := os.WriteFile(bin+".state.json", b, 0o600); err != nil {
		t.Fatal(err)
	}
	shareWithHosts(t, filepath.Dir(bin), 0o777) // the fake writes its log and clients beside itself
	shareWithHosts(t, bin+".state.json", 0o644)
	if onAWSLocal(t) && os.Geteuid() == 0 { // its log is appended to by the service (root) and the hosts
		if err := os.WriteFile(bin+".log", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		shareWithHosts(t, bin+".log", 0o666)
	}
	return bin
}

func TestPerforceCredentialsAndProjects(t *testing.T) {
	p4 := fakeP4(t)
	w := newWorld(t, func(c *Config) {
		c.P4 = p4
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	path := "/organizations/" + w.orgID + "/perforce"
	creds := func(server, user, ticket string) map[string]any {
		return map[string]any{"serverUrl": server, "userName": user, "ticket": ticket}
	}
	wantError(t, w.do(t, "POST", "/projects/add-perforce", w.token, `{"name":"Game","depot":"//game/main","streamPath":"//game/main"}`), 409, "perforce_not_configured")
	for _, bad := range []map[string]any{
		creds("rsh:/bin/sh -c 'touch /tmp/x'", "builder", p4Ticket),
		creds("ssl:10.0.0.5:1666", "builder", p4Ticket), // not a public address, not allowed
		creds("ssl:127.0.0.1:1666", "-builder", p4Ticket),
		creds("ssl:127.0.0.1:1666", "builder", ""),
	} {
		wantError(t, w.do(t, "PATCH", path, w.token, bad), 400, "validation_failed")
	}
	if _, err := os.Stat(p4 + ".log"); err == nil {
		t.Fatal("p4 ran for credentials refused before any process should start")
	}
	wantError(t, w.do(t, "PATCH", path, w.token, creds("ssl:127.0.0.1:1666", "builder", "WRONGTICKET")), 400, "perforce_auth_failed")
	if r := w.do(t, "GET", "/organizations/"+w.orgID, w.token, nil); r.Body["perforce"] != nil {
		t.Fatalf("refused credentials were saved: %s", r.Raw)
	}
	wantError(t, w.do(t, "PATCH", path, addUser(t, w.testService, w.orgID, "member"), creds("ssl:127.0.0.1:1666", "builder", p4Ticket)), 403, "insufficient_scope")
	r := w.do(t, "PATCH", path, w.token, creds("ssl:127.0.0.1:1666", "builder", p4Ticket))
	if r.Status != 200 || field(t, r.Body, "perforce", "serverUrl") != "ssl:127.0.0.1:1666" || field(t, r.Body, "perforce", "userName") != "builder" ||
		r.Body["perforce"].(map[string]any)["ticketSet"] != true || strings.Contains(r.Raw, p4Ticket) {
		t.Fatalf("save: %d %s", r.Status, r.Raw)
	}
	argv, _ := os.ReadFile(p4 + ".log")
	if len(argv) == 0 || strings.Contains(string(argv), p4Ticket) {
		t.Fatalf("p4 log (the ticket must never be in argv):\n%s", argv)
	}

	add := func(body string) response { return w.do(t, "POST", "/projects/add-perforce", w.token, body) }
	r = add(`{"name":"Game","depot":"//game/main","streamPath":"//game/main"}`)
	wantError(t, r, 409, "multiple_uprojects")
	if c := r.Body["candidates"].([]any); len(c) != 2 || c[0] != "Shooter/Shooter.uproject" {
		t.Errorf("candidates %v", c)
	}
	wantError(t, add(`{"name":"Game","depot":"//game/nope","streamPath":"//game/nope"}`), 400, "validation_failed")
	wantError(t, add(`{"name":"Game","depot":"//game/main","streamPath":"//game/main","uprojectPath":"Nope/Nope.uproject"}`), 404, "uproject_not_found")
	r = add(`{"name":"Game","depot":"//game/main","streamPath":"//game/main","uprojectPath":"Shooter/Shooter.uproject"}`)
	if r.Status != 201 || field(t, r.Body, "sourceControl") != "perforce" || field(t, r.Body, "streamPath") != "//game/main" ||
		field(t, r.Body, "uproject", "engineVersion") != "5.3" || field(t, r.Body, "uproject", "projectName") != "Shooter" {
		t.Fatalf("add-perforce: %d %s", r.Status, r.Raw)
	}
	if got := items(t, w.do(t, "GET", "/projects?sourceControl=perforce", w.token, nil)); len(got) != 1 || got[0]["repoLink"] != "//game/main" {
		t.Fatalf("perforce projects: %v", got)
	}
}
