package api

import (
	"path/filepath"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

func TestTokensPerUserAreCappedAndDieWithTheirParent(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	create := func(token string) e2e.Response {
		return ts.Do(t, "POST", "/auth/tokens", token, `{"name":"ci"}`)
	}
	me := func(token string) int { return ts.Do(t, "GET", "/auth/me", token, nil).Status }

	// A token made with a token, and one made with that: revoking the first revokes both.
	child := create(ts.Token)
	grandchild := create(e2e.Field(t, child.Body, "token"))
	sibling := create(ts.Token)
	if child.Status != 201 || grandchild.Status != 201 || sibling.Status != 201 {
		t.Fatalf("create: %d %d %d", child.Status, grandchild.Status, sibling.Status)
	}
	for _, tok := range []string{e2e.Field(t, child.Body, "token"), e2e.Field(t, grandchild.Body, "token")} {
		if s := me(tok); s != 200 { // also fills the cache of resolved tokens
			t.Fatalf("GET /me with a new token: %d", s)
		}
	}
	if r := ts.Do(t, "DELETE", "/auth/tokens/"+e2e.Field(t, child.Body, "id"), ts.Token, nil); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, ts.Do(t, "GET", "/auth/me", e2e.Field(t, child.Body, "token"), nil), 401, "invalid_token")
	e2e.WantError(t, ts.Do(t, "GET", "/auth/me", e2e.Field(t, grandchild.Body, "token"), nil), 401, "invalid_token")
	if s := me(e2e.Field(t, sibling.Body, "token")); s != 200 {
		t.Fatalf("a sibling of the revoked token: %d", s)
	}

	// At most 100 tokens a user: the owner holds its first token and the sibling.
	for i := 2; i < 100; i++ {
		if r := create(ts.Token); r.Status != 201 {
			t.Fatalf("token %d: %d %s", i+1, r.Status, r.Raw)
		}
	}
	e2e.WantError(t, create(ts.Token), 409, "invalid_state")
	if r := ts.Do(t, "DELETE", "/auth/tokens/"+e2e.Field(t, sibling.Body, "id"), ts.Token, nil); r.Status != 204 {
		t.Fatalf("revoke: %d", r.Status)
	}
	if r := create(ts.Token); r.Status != 201 {
		t.Fatalf("a token after revoking one: %d %s", r.Status, r.Raw)
	}
}
