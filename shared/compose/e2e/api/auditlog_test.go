package api

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestAuditLog: the organization's changes are in its audit log with their actor, address and
// target, secrets never; owners and admins read it, filtered by actor and kind; members and
// viewers cannot. It runs on kiln serve and on aws-local.
func TestAuditLog(t *testing.T) { e2e.Both(t, auditLog) }

func auditLog(t *testing.T, dep e2e.Deployment) {
	cfg := e2e.NewConfig(t, filepath.Join(t.TempDir(), "data"))
	e2e.LoopbackAllowed(&cfg)
	ts := e2e.StartService(t, dep, cfg)
	orgID := e2e.OrgOf(t, ts)
	admin := e2e.AddUser(t, ts, orgID, "admin")
	member := e2e.AddUser(t, ts, orgID, "member")
	idOf := func(token string) string {
		t.Helper()
		return e2e.Field(t, ts.Do(t, "GET", "/auth/me", token, nil).Body, "user", "id")
	}
	ownerID, adminID, memberID := idOf(ts.Token), idOf(admin), idOf(member)
	org := "/organizations/" + orgID
	must := func(r e2e.Response, status int) e2e.Response {
		t.Helper()
		if r.Status != status {
			t.Fatalf("got %d, want %d: %s", r.Status, status, r.Raw)
		}
		return r
	}

	// Changes by the owner and the admin; each answer may hold a secret the log must not.
	must(ts.Do(t, "PATCH", org, ts.Token, map[string]any{"name": "Renamed Studio"}), 200)
	tok := must(ts.Do(t, "POST", "/auth/tokens", admin, map[string]any{"name": "ci"}), 201)
	hook := must(ts.Do(t, "POST", org+"/webhooks", ts.Token, map[string]any{"url": "http://127.0.0.1:9/hooks", "events": []string{"build.failed"}}), 201)
	must(ts.Do(t, "PATCH", org+"/members/"+memberID, admin, map[string]any{"role": "viewer"}), 200)
	must(ts.Do(t, "PATCH", org+"/members/"+memberID, admin, map[string]any{"role": "viewer"}), 200) // no change: no event
	must(ts.Do(t, "DELETE", "/auth/tokens/"+e2e.Field(t, tok.Body, "id"), admin, nil), 204)
	must(ts.Do(t, "DELETE", org+"/members/"+memberID, ts.Token, nil), 204)
	// A refused change is not a change.
	e2e.WantError(t, ts.Do(t, "PATCH", org+"/members/"+ownerID, ts.Token, map[string]any{"role": "viewer"}), 409, "invalid_state")

	log := must(ts.Do(t, "GET", org+"/audit-log", admin, nil), 200)
	for _, secret := range []string{e2e.Field(t, tok.Body, "token"), e2e.Field(t, hook.Body, "secret")} {
		if strings.Contains(log.Raw, secret) {
			t.Fatalf("the audit log shows a secret: %s", log.Raw)
		}
	}
	type event struct{ kind, actor, target string }
	var got []event
	for _, e := range e2e.Items(t, log) {
		actor := e["actor"].(map[string]any)
		got = append(got, event{e["kind"].(string), actor["id"].(string), e["target"].(string)})
		if actor["kind"] == "member" && (e["address"] != "127.0.0.1" || actor["name"] == "" || actor["email"] == "") {
			t.Errorf("event %v lacks its actor's name, email or address: %v", e["kind"], e)
		}
	}
	want := []event{ // newest first; the operator's kiln admin user comes first in time
		{"member.removed", ownerID, memberID},
		{"token.revoked", adminID, e2e.Field(t, tok.Body, "id")},
		{"member.role_changed", adminID, memberID},
		{"webhook.created", ownerID, e2e.Field(t, hook.Body, "id")},
		{"token.created", adminID, e2e.Field(t, tok.Body, "id")},
		{"organization.updated", ownerID, orgID},
		{"member.added", "", memberID},
		{"member.added", "", adminID},
	}
	if len(got) != len(want) {
		t.Fatalf("audit log: got %d events %v, want %v\n%s", len(got), got, want, log.Raw)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	roleChange := e2e.Items(t, log)[2]["details"].(map[string]any)
	if roleChange["from"] != "member" || roleChange["role"] != "viewer" {
		t.Errorf("the role change does not say from and to: %v", roleChange)
	}
	if d := e2e.Items(t, log)[3]["details"].(map[string]any); d["url"] != "set" || d["events"] != "build.failed" {
		t.Errorf("the webhook's details: %v (the URL only as set)", d)
	}

	// Filters, paging, and who may read it.
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"?actor=" + adminID, 3},
		{"?kind=member", 4},
		{"?kind=token.created", 1},
		{"?kind=member&actor=" + ownerID, 1},
		{"?limit=3", 3},
	} {
		if n := len(e2e.Items(t, must(ts.Do(t, "GET", org+"/audit-log"+tc.query, ts.Token, nil), 200))); n != tc.want {
			t.Errorf("audit-log%s: %d events, want %d", tc.query, n, tc.want)
		}
	}
	e2e.WantError(t, ts.Do(t, "GET", org+"/audit-log?kind=Member!", ts.Token, nil), 400, "validation_failed")

	// An invitation, accepted: the link's secret is nowhere in the log.
	inv := must(ts.Do(t, "POST", org+"/invitations", admin, map[string]any{"email": "new@studio.example", "role": "member"}), 201)
	_, secret, _ := strings.Cut(e2e.Field(t, inv.Body, "link"), "#")
	joined := must(ts.Do(t, "POST", "/invitations/accept", "", map[string]any{"secret": secret, "name": "New Artist"}), 201)
	invLog := must(ts.Do(t, "GET", org+"/audit-log?kind=invitation", ts.Token, nil), 200)
	if strings.Contains(invLog.Raw, secret) || strings.Contains(invLog.Raw, e2e.Field(t, joined.Body, "token")) {
		t.Fatalf("the audit log shows an invitation's secret or the new member's token: %s", invLog.Raw)
	}
	evs := e2e.Items(t, invLog)
	if len(evs) != 2 || evs[0]["kind"] != "invitation.accepted" || evs[0]["actor"].(map[string]any)["id"] != e2e.Field(t, joined.Body, "user", "id") ||
		evs[1]["kind"] != "invitation.created" || evs[1]["actor"].(map[string]any)["id"] != adminID ||
		evs[1]["details"].(map[string]any)["email"] != "new@studio.example" || evs[1]["target"] != e2e.Field(t, inv.Body, "id") {
		t.Fatalf("invitation events: %s", invLog.Raw)
	}
	viewer := e2e.AddUser(t, ts, orgID, "viewer")
	e2e.WantError(t, ts.Do(t, "GET", org+"/audit-log", viewer, nil), http.StatusForbidden, "insufficient_scope")
	other := e2e.BootstrapOrg(t, ts, "Elsewhere")
	e2e.WantError(t, ts.Do(t, "GET", org+"/audit-log", other.Token, nil), 404, "not_found")
}
