package e2e

import (
	"testing"
)

// createAgent makes an agent of orgID in pool with token (an owner's or admin's) and returns its
// id and token.
func CreateAgent(t *testing.T, ts *Server, token, orgID, name, pool string) (id, secret string) {
	t.Helper()
	r := ts.Do(t, "POST", "/organizations/"+orgID+"/agents", token, map[string]any{"name": name, "pool": pool})
	if r.Status != 201 {
		t.Fatalf("create agent: %d %s", r.Status, r.Raw)
	}
	return Field(t, r.Body, "id"), Field(t, r.Body, "token")
}
