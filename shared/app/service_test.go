package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestFirstStartPrintsAWorkingOwnerToken(t *testing.T) {
	dir := t.TempDir()
	ts := startService(t, testConfig(t, dir))
	if ts.token == "" {
		t.Fatalf("first start printed no token:\n%s", ts.out.String())
	}
	r := ts.do(t, "GET", "/auth/me", ts.token, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /auth/me: %d %s", r.Status, r.Raw)
	}
	if got := field(t, r.Body, "organization", "name"); got != "Local" {
		t.Errorf("organization %q, want Local", got)
	}
	if got := field(t, r.Body, "membership", "role"); got != "owner" {
		t.Errorf("role %q, want owner", got)
	}
	if field(t, r.Body, "user", "id") == "" || field(t, r.Body, "organization", "slug") != "local" {
		t.Errorf("incomplete /auth/me: %s", r.Raw)
	}
	if strings.Contains(ts.logs.String(), ts.token) {
		t.Error("the token appears in the logs")
	}
}

func TestRestartKeepsStateAndPrintsNoNewToken(t *testing.T) {
	dir := t.TempDir()
	first := startService(t, testConfig(t, dir))
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-first.Done(); err != nil {
		t.Fatalf("serve ended with %v", err)
	}
	second := startService(t, testConfig(t, dir))
	if tokenRe.MatchString(second.out.String()) {
		t.Fatalf("second start printed a token again:\n%s", second.out.String())
	}
	if r := second.do(t, "GET", "/auth/me", first.token, nil); r.Status != http.StatusOK {
		t.Fatalf("the first token no longer works after a restart: %d %s", r.Status, r.Raw)
	}
}

func TestAdminBootstrapWhileServingMakesAnIsolatedOrganization(t *testing.T) {
	dir := t.TempDir()
	ts := startService(t, testConfig(t, dir))
	local := ts.do(t, "GET", "/auth/me", ts.token, nil)
	localOrg := field(t, local.Body, "organization", "id")

	var out bytes.Buffer
	if err := AdminBootstrap(context.Background(), dir, "Second Studio", "lead@second.example", "Lead", "", &out); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	var created map[string]string
	if err := json.Unmarshal(out.Bytes(), &created); err != nil || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("bootstrap printed %q, want one JSON line (%v)", out.String(), err)
	}
	second := created["token"]
	me := ts.do(t, "GET", "/auth/me", second, nil)
	if me.Status != 200 || field(t, me.Body, "organization", "id") != created["organizationId"] || field(t, me.Body, "user", "id") != created["userId"] {
		t.Fatalf("second org's /auth/me: %d %s (created %v)", me.Status, me.Raw, created)
	}
	if field(t, me.Body, "organization", "slug") != "second-studio" {
		t.Errorf("slug %q", field(t, me.Body, "organization", "slug"))
	}
	for _, req := range []struct{ method, path string }{
		{"GET", "/organizations/" + localOrg},
		{"PATCH", "/organizations/" + localOrg},
		{"DELETE", "/organizations/" + localOrg + "/integrations/github"},
	} {
		r := ts.do(t, req.method, req.path, second, map[string]any{"name": "Taken over"})
		wantError(t, r, http.StatusNotFound, "not_found")
	}
	if r := ts.do(t, "GET", "/organizations/"+localOrg, ts.token, nil); field(t, r.Body, "name") != "Local" {
		t.Fatalf("the Local organization changed: %s", r.Raw)
	}
}

func TestAdminUserRolesFollowTheMatrix(t *testing.T) {
	dir := t.TempDir()
	ts := startService(t, testConfig(t, dir))
	orgID := field(t, ts.do(t, "GET", "/auth/me", ts.token, nil).Body, "organization", "id")
	tokens := map[string]string{"owner": ts.token}
	for _, role := range []string{"admin", "member", "viewer"} {
		var out bytes.Buffer
		if err := AdminAddUser(context.Background(), dir, orgID, role+"@studio.example", "A "+role, role, &out); err != nil {
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
			me := ts.do(t, "GET", "/auth/me", tokens[tt.role], nil)
			if field(t, me.Body, "membership", "role") != tt.role {
				t.Fatalf("role %s: %s", tt.role, me.Raw)
			}
			if r := ts.do(t, "GET", "/organizations/"+orgID, tokens[tt.role], nil); r.Status != 200 {
				t.Fatalf("read org: %d", r.Status)
			}
			r := ts.do(t, "PATCH", "/organizations/"+orgID, tokens[tt.role], map[string]any{"name": "Renamed by " + tt.role})
			if tt.patchAllow {
				if r.Status != 200 || field(t, r.Body, "name") != "Renamed by "+tt.role {
					t.Fatalf("PATCH as %s: %d %s", tt.role, r.Status, r.Raw)
				}
			} else {
				wantError(t, r, http.StatusForbidden, "insufficient_scope")
			}
		})
	}
}

func TestAdminRefusesBadInputAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	ts := startService(t, testConfig(t, dir))
	orgID := field(t, ts.do(t, "GET", "/auth/me", ts.token, nil).Body, "organization", "id")
	var out bytes.Buffer
	cases := []struct{ name, email, role string }{
		{"Someone", "not-an-email", "member"},
		{"Someone", "someone@studio.example", "superuser"},
		{"", "someone@studio.example", "member"},
	}
	for _, c := range cases {
		err := AdminAddUser(context.Background(), dir, orgID, c.email, c.name, c.role, &out)
		if err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := AdminAddUser(context.Background(), dir, "nosuchorganization000000", "x@studio.example", "X", "member", &out); err == nil {
		t.Error("unknown organization: no error")
	}
	if err := AdminAddUser(context.Background(), dir, orgID, "OWNER@kiln.local", "Dup", "member", &out); err == nil {
		t.Error("duplicate email (other case): no error")
	}
	if out.Len() != 0 {
		t.Errorf("printed %q for refused input", out.String())
	}
}
