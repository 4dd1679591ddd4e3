package app

import (
	"path/filepath"
	"testing"
)

func TestTokensPerUserAreCappedAndDieWithTheirParent(t *testing.T) {
	ts := startService(t, testConfig(t, filepath.Join(t.TempDir(), "data")))
	create := func(token string) response {
		return ts.do(t, "POST", "/auth/tokens", token, `{"name":"ci"}`)
	}
	me := func(token string) int { return ts.do(t, "GET", "/auth/me", token, nil).Status }

	// A token made with a token, and one made with that: revoking the first revokes both.
	child := create(ts.token)
	grandchild := create(field(t, child.Body, "token"))
	sibling := create(ts.token)
	if child.Status != 201 || grandchild.Status != 201 || sibling.Status != 201 {
		t.Fatalf("create: %d %d %d", child.Status, grandchild.Status, sibling.Status)
	}
	for _, tok := range []string{field(t, child.Body, "token"), field(t, grandchild.Body, "token")} {
		if s := me(tok); s != 200 { // also fills the cache of resolved tokens
			t.Fatalf("GET /me with a new token: %d", s)
		}
	}
	if r := ts.do(t, "DELETE", "/auth/tokens/"+field(t, child.Body, "id"), ts.token, nil); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	wantError(t, ts.do(t, "GET", "/auth/me", field(t, child.Body, "token"), nil), 401, "invalid_token")
	wantError(t, ts.do(t, "GET", "/auth/me", field(t, grandchild.Body, "token"), nil), 401, "invalid_token")
	if s := me(field(t, sibling.Body, "token")); s != 200 {
		t.Fatalf("a sibling of the revoked token: %d", s)
	}

	// At most 100 tokens a user: the owner holds its first token and the sibling.
	for i := 2; i < 100; i++ {
		if r := create(ts.token); r.Status != 201 {
			t.Fatalf("token %d: %d %s", i+1, r.Status, r.Raw)
		}
	}
	wantError(t, create(ts.token), 409, "invalid_state")
	if r := ts.do(t, "DELETE", "/auth/tokens/"+field(t, sibling.Body, "id"), ts.token, nil); r.Status != 204 {
		t.Fatalf("revoke: %d", r.Status)
	}
	if r := create(ts.token); r.Status != 201 {
		t.Fatalf("a token after revoking one: %d %s", r.Status, r.Raw)
	}
}
