package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

func TestFirstStartPrintsAWorkingOwnerToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, dir))
	if ts.Token == "" {
		t.Fatalf("first start printed no token:\n%s", ts.Out.String())
	}
	r := ts.Do(t, "GET", "/auth/me", ts.Token, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /auth/me: %d %s", r.Status, r.Raw)
	}
	if got := e2e.Field(t, r.Body, "organization", "name"); got != "Local" {
		t.Errorf("organization %q, want Local", got)
	}
	if got := e2e.Field(t, r.Body, "membership", "role"); got != "owner" {
		t.Errorf("role %q, want owner", got)
	}
	if e2e.Field(t, r.Body, "user", "id") == "" || e2e.Field(t, r.Body, "organization", "slug") != "local" {
		t.Errorf("incomplete /auth/me: %s", r.Raw)
	}
	if strings.Contains(ts.Logs.String(), ts.Token) {
		t.Error("the token appears in the logs")
	}
}

func TestRestartKeepsStateAndPrintsNoNewToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, dir))
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-first.Done(); err != nil {
		t.Fatalf("serve ended with %v", err)
	}
	second := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, dir))
	if e2e.TokenRe.MatchString(second.Out.String()) {
		t.Fatalf("second start printed a token again:\n%s", second.Out.String())
	}
	if r := second.Do(t, "GET", "/auth/me", first.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("the first token no longer works after a restart: %d %s", r.Status, r.Raw)
	}
}

func TestAdminBootstrapWhileServingMakesAnIsolatedOrganization(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, dir))
	local := ts.Do(t, "GET", "/auth/me", ts.Token, nil)
	localOrg := e2e.Field(t, local.Body, "organization", "id")

	var out bytes.Buffer
	if err := serve.AdminBootstrap(context.Background(), dir, "Second Studio", "lead@second.example", "Lead", "", &out); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	var created map[string]string
	if err := json.Unmarshal(out.Bytes(), &created); err != nil || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("bootstrap printed %q, want one JSON line (%v)", out.String(), err)
	}
	second := created["token"]
	me := ts.Do(t, "GET", "/auth/me", second, nil)
	if me.Status != 200 || e2e.Field(t, me.Body, "organization", "id") != created["organizationId"] || e2e.Field(t, me.Body, "user", "id") != created["userId"] {
		t.Fatalf("second org's /auth/me: %d %s (created %v)", me.Status, me.Raw, created)
	}
	if e2e.Field(t, me.Body, "organization", "slug") != "second-studio" {
		t.Errorf("slug %q", e2e.Field(t, me.Body, "organization", "slug"))
	}
	for _, req := range []struct{ method, path string }{
		{"GET", "/organizations/" + localOrg},
		{"PATCH", "/organizations/" + localOrg},
		{"DELETE", "/organizations/" + localOrg + "/integrations/github"},
	} {
		r := ts.Do(t, req.method, req.path, second, map[string]any{"name": "Taken over"})
		e2e.WantError(t, r, http.StatusNotFound, "not_found")
	}
	if r := ts.Do(t, "GET", "/organizations/"+localOrg, ts.Token, nil); e2e.Field(t, r.Body, "name") != "Local" {
		t.Fatalf("the Local organization changed: %s", r.Raw)
	}
}

func TestAdminUserRolesFollowTheMatrix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, dir))
	orgID := e2e.Field(t, ts.Do(t, "GET", "/auth/me", ts.Token, nil).Body, "organization", "id")
	tokens := map[string]string{"owner": ts.Token}
	for _, role := range []string{"admin", "member", "viewer"} {
		var out bytes.Buffer
		if err := serve.AdminAddUser(context.Background(), dir, orgID, role+"@studio.example", "A "+role, role, &out); err != nil {
			t.Fatalf("add %s: %v", role, err)
		}
		var created map[string]string
		if err := json.Unmarshal(out.Bytes(), &created); err != nil {
			t.Fatal(err)
		}
		tokens[role] = created["token"]
	}
	tests := []struct {
		role       string
		patchAllow bool
	}{{"owner", true}, {"admin", true}, {"member", false}, {"viewer", false}}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			me := ts.Do(t, "GET", "/auth/me", tokens[tt.role], nil)
			if e2e.Field(t, me.Body, "membership", "role") != tt.role {
				t.Fatalf("role %s: %s", tt.role, me.Raw)
			}
			if r := ts.Do(t, "GET", "/organizations/"+orgID, tokens[tt.role], nil); r.Status != 200 {
				t.Fatalf("read org: %d", r.Status)
			}
			r := ts.Do(t, "PATCH", "/organizations/"+orgID, tokens[tt.role], map[string]any{"name": "Renamed by " + tt.role})
			if tt.patchAllow {
				if r.Status != 200 || e2e.Field(t, r.Body, "name") != "Renamed by "+tt.role {
					t.Fatalf("PATCH as %s: %d %s", tt.role, r.Status, r.Raw)
				}
			} else {
				e2e.WantError(t, r, http.StatusForbidden, "insufficient_scope")
			}
		})
	}
}

func TestAdminRefusesBadInputAndWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, dir))
	orgID := e2e.Field(t, ts.Do(t, "GET", "/auth/me", ts.Token, nil).Body, "organization", "id")
	var out bytes.Buffer
	cases := []struct{ name, email, role string }{
		{"Someone", "not-an-email", "member"},
		{"Someone", "someone@studio.example", "superuser"},
		{"", "someone@studio.example", "member"},
	}
	for _, c := range cases {
		err := serve.AdminAddUser(context.Background(), dir, orgID, c.email, c.name, c.role, &out)
		if err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := serve.AdminAddUser(context.Background(), dir, "nosuchorganization000000", "x@studio.example", "X", "member", &out); err == nil {
		t.Error("unknown organization: no error")
	}
	if err := serve.AdminAddUser(context.Background(), dir, orgID, "OWNER@kiln.local", "Dup", "member", &out); err == nil {
		t.Error("duplicate email (other case): no error")
	}
	if out.Len() != 0 {
		t.Errorf("printed %q for refused input", out.String())
	}
}
