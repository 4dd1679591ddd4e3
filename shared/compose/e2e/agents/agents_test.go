package agents

import (
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestAgentsAPI: admins make agents in a pool, the token is shown once and listed by its hint
// only; revoking keeps the agent listed with revokedAt; bad input changes nothing.
func TestAgentsAPI(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	path := "/organizations/" + w.OrgID + "/agents"
	e2e.WantError(t, w.Do(t, "POST", path, e2e.AddUser(t, w.Server, w.OrgID, "member"), `{"name":"box","pool":"win64"}`), 403, "insufficient_scope")
	for _, bad := range []string{`{"name":"box"}`, `{"pool":"win64"}`, `{"name":"","pool":"win64"}`,
		`{"name":"box","pool":"Win64"}`, `{"name":"box","pool":"-win"}`, `{"name":"box","pool":"kiln-hosted-win64"}`, `{"name":"box","pool":"` + strings.Repeat("a", 64) + `"}`} {
		e2e.WantError(t, w.Do(t, "POST", path, w.Token, bad), 400, "validation_failed")
	}
	if got := e2e.Items(t, w.Do(t, "GET", path, w.Token, nil)); len(got) != 0 {
		t.Fatalf("refused creates made agents: %v", got)
	}
	r := w.Do(t, "POST", path, w.Token, `{"name":"build box 1","pool":"win64-ue5.4"}`)
	secret := e2e.Field(t, r.Body, "token")
	if r.Status != 201 || !strings.HasPrefix(secret, "kagent_") || !strings.HasPrefix(secret, e2e.Field(t, r.Body, "hint")) ||
		e2e.Field(t, r.Body, "pool") != "win64-ue5.4" || r.Body["revokedAt"] != nil {
		t.Fatalf("create agent: %d %s", r.Status, r.Raw)
	}
	id := e2e.Field(t, r.Body, "id")
	list := w.Do(t, "GET", path, w.Token, nil)
	if got := e2e.Items(t, list); len(got) != 1 || got[0]["id"] != id || got[0]["token"] != nil || strings.Contains(list.Raw, secret) {
		t.Fatalf("agents: %s", list.Raw)
	}

	e2e.WantError(t, w.Do(t, "GET", "/auth/me", secret, nil), 401, "invalid_token") // an agent token is no API token
	other := e2e.BootstrapOrg(t, w.Server, "Other Studio")
	e2e.WantError(t, w.Do(t, "DELETE", "/organizations/"+other.OrgID+"/agents/"+id, other.Token, nil), 404, "not_found")
	e2e.WantError(t, w.Do(t, "DELETE", path+"/"+id, other.Token, nil), 404, "not_found")
	for range 2 { // revoking again changes nothing
		if r := w.Do(t, "DELETE", path+"/"+id, w.Token, nil); r.Status != 204 {
			t.Fatalf("revoke agent: %d %s", r.Status, r.Raw)
		}
	}
	e2e.WantError(t, w.Do(t, "DELETE", path+"/nosuchagent", w.Token, nil), 404, "not_found")
	if got := e2e.Items(t, w.Do(t, "GET", path, w.Token, nil)); len(got) != 1 || got[0]["revokedAt"] == nil {
		t.Fatalf("revoked agent: %v", got)
	}
}
