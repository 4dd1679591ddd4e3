package perforce

import (
	"os"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestPerforceCredentialsAndProjects(t *testing.T) {
	t.Parallel()
	p4 := e2e.FakeP4(t, e2e.Serve)
	w := e2e.NewWorld(t, e2e.Serve, e2e.WithP4(p4))
	path := "/organizations/" + w.OrgID + "/perforce"
	creds := func(server, user, ticket string) map[string]any {
		return map[string]any{"serverUrl": server, "userName": user, "ticket": ticket}
	}
	e2e.WantError(t, w.Do(t, "POST", "/projects/add-perforce", w.Token, `{"name":"Game","depot":"//game/main","streamPath":"//game/main"}`), 409, "perforce_not_configured")
	for _, bad := range []map[string]any{
		creds("rsh:/bin/sh -c 'touch /tmp/x'", "builder", e2e.P4Ticket),
		creds("ssl:10.0.0.5:1666", "builder", e2e.P4Ticket), // not a public address, not allowed
		creds("ssl:127.0.0.1:1666", "-builder", e2e.P4Ticket),
		creds("ssl:127.0.0.1:1666", "builder", ""),
	} {
		e2e.WantError(t, w.Do(t, "PATCH", path, w.Token, bad), 400, "validation_failed")
	}
	if _, err := os.Stat(p4 + ".log"); err == nil {
		t.Fatal("p4 ran for credentials refused before any process should start")
	}
	e2e.WantError(t, w.Do(t, "PATCH", path, w.Token, creds("ssl:127.0.0.1:1666", "builder", "WRONGTICKET")), 400, "perforce_auth_failed")
	if r := w.Do(t, "GET", "/organizations/"+w.OrgID, w.Token, nil); r.Body["perforce"] != nil {
		t.Fatalf("refused credentials were saved: %s", r.Raw)
	}
	e2e.WantError(t, w.Do(t, "PATCH", path, e2e.AddUser(t, w.Server, w.OrgID, "member"), creds("ssl:127.0.0.1:1666", "builder", e2e.P4Ticket)), 403, "insufficient_scope")
	r := w.Do(t, "PATCH", path, w.Token, creds("ssl:127.0.0.1:1666", "builder", e2e.P4Ticket))
	if r.Status != 200 || e2e.Field(t, r.Body, "perforce", "serverUrl") != "ssl:127.0.0.1:1666" || e2e.Field(t, r.Body, "perforce", "userName") != "builder" ||
		r.Body["perforce"].(map[string]any)["ticketSet"] != true || strings.Contains(r.Raw, e2e.P4Ticket) {
		t.Fatalf("save: %d %s", r.Status, r.Raw)
	}
	argv, _ := os.ReadFile(p4 + ".log")
	if len(argv) == 0 || strings.Contains(string(argv), e2e.P4Ticket) {
		t.Fatalf("p4 log (the ticket must never be in argv):\n%s", argv)
	}

	add := func(body string) e2e.Response { return w.Do(t, "POST", "/projects/add-perforce", w.Token, body) }
	r = add(`{"name":"Game","depot":"//game/main","streamPath":"//game/main"}`)
	e2e.WantError(t, r, 409, "multiple_uprojects")
	if c := r.Body["candidates"].([]any); len(c) != 2 || c[0] != "Shooter/Shooter.uproject" {
		t.Errorf("candidates %v", c)
	}
	e2e.WantError(t, add(`{"name":"Game","depot":"//game/nope","streamPath":"//game/nope"}`), 400, "validation_failed")
	e2e.WantError(t, add(`{"name":"Game","depot":"//game/main","streamPath":"//game/main","uprojectPath":"Nope/Nope.uproject"}`), 404, "uproject_not_found")
	r = add(`{"name":"Game","depot":"//game/main","streamPath":"//game/main","uprojectPath":"Shooter/Shooter.uproject"}`)
	if r.Status != 201 || e2e.Field(t, r.Body, "sourceControl") != "perforce" || e2e.Field(t, r.Body, "streamPath") != "//game/main" ||
		e2e.Field(t, r.Body, "uproject", "engineVersion") != "5.3" || e2e.Field(t, r.Body, "uproject", "projectName") != "Shooter" {
		t.Fatalf("add-perforce: %d %s", r.Status, r.Raw)
	}
	if got := e2e.Items(t, w.Do(t, "GET", "/projects?sourceControl=perforce", w.Token, nil)); len(got) != 1 || got[0]["repoLink"] != "//game/main" {
		t.Fatalf("perforce projects: %v", got)
	}
}
