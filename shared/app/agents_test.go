package app

import (
	"strings"
	"testing"
)

// createAgent makes an agent of orgID in pool with token (an owner's or admin's) and returns its
// id and token.
func createAgent(t *testing.T, ts *testService, token, orgID, name, pool string) (id, secret string) {
	t.Helper()
	r := ts.do(t, "POST", "/organizations/"+orgID+"/agents", token, map[string]any{"name": name, "pool": pool})
	if r.Status != 201 {
		t.Fatalf("create agent: %d %s", r.Status, r.Raw)
	}
	return field(t, r.Body, "id"), field(t, r.Body, "token")
}

// TestAgentsAPI: admins make agents in a pool, the token is shown once and listed by its hint
// only; revoking keeps the agent listed with revokedAt; bad input changes nothing.
func TestAgentsAPI(t *testing.T) {
	w := newWorld(t)
	path := "/organizations/" + w.orgID + "/agents"
	wantError(t, w.do(t, "POST", path, addUser(t, w.testService, w.orgID, "member"), `{"name":"box","pool":"win64"}`), 403, "insufficient_scope")
	for _, bad := range []string{`{"name":"box"}`, `{"pool":"win64"}`, `{"name":"","pool":"win64"}`,
		`{"name":"box","pool":"Win64"}`, `{"name":"box","pool":"-win"}`, `{"name":"box","pool":"kiln-hosted-win64"}`, `{"name":"box","pool":"` + strings.Repeat("a", 64) + `"}`} {
		wantError(t, w.do(t, "POST", path, w.token, bad), 400, "validation_failed")
	}
	if got := items(t, w.do(t, "GET", path, w.token, nil)); len(got) != 0 {
		t.Fatalf("refused creates made agents: %v", got)
	}
	r := w.do(t, "POST", path, w.token, `{"name":"build box 1","pool":"win64-ue5.4"}`)
	secret := field(t, r.Body, "token")
	if r.Status != 201 || !strings.HasPrefix(secret, "kagent_") || !strings.HasPrefix(secret, field(t, r.Body, "hint")) ||
		field(t, r.Body, "pool") != "win64-ue5.4" || r.Body["revokedAt"] != nil {
		t.Fatalf("create agent: %d %s", r.Status, r.Raw)
	}
	id := field(t, r.Body, "id")
	list := w.do(t, "GET", path, w.token, nil)
	if got := items(t, list); len(got) != 1 || got[0]["id"] != id || got[0]["token"] != nil || strings.Contains(list.Raw, secret) {
		t.Fatalf("agents: %s", list.Raw)
	}

	wantError(t, w.do(t, "GET", "/auth/me", secret, nil), 401, "invalid_token") // an agent token is no API token
	other := bootstrapOrg(t, w.testService, "Other Studio")
	wantError(t, w.do(t, "DELETE", "/organizations/"+other.orgID+"/agents/"+id, other.token, nil), 404, "not_found")
	wantError(t, w.do(t, "DELETE", path+"/"+id, other.token, nil), 404, "not_found")
	for range 2 { // revoking again changes nothing
		if r := w.do(t, "DELETE", path+"/"+id, w.token, nil); r.Status != 204 {
			t.Fatalf("revoke agent: %d %s", r.Status, r.Raw)
		}
	}
	wantError(t, w.do(t, "DELETE", path+"/nosuchagent", w.token, nil), 404, "not_found")
	if got := items(t, w.do(t, "GET", path, w.token, nil)); len(got) != 1 || got[0]["revokedAt"] == nil {
		t.Fatalf("revoked agent: %v", got)
	}
}
