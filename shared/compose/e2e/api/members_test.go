package api

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestListMembers: every role reads who belongs to its organization and with which role (the
// console's members table); another organization's id is 404; the list pages.
func TestListMembers(t *testing.T) {
	t.Parallel()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := e2e.OrgOf(t, ts)
	viewer := e2e.AddUser(t, ts, orgID, "viewer")
	e2e.AddUser(t, ts, orgID, "admin")
	other := e2e.BootstrapOrg(t, ts, "Elsewhere")

	r := ts.Do(t, "GET", "/organizations/"+orgID+"/members", viewer, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("viewer lists members: %d %s", r.Status, r.Raw)
	}
	roles := map[string]int{}
	for _, m := range e2e.Items(t, r) {
		roles[m["role"].(string)]++
	}
	if roles["owner"] != 1 || roles["viewer"] != 1 || roles["admin"] != 1 || len(e2e.Items(t, r)) != 3 {
		t.Fatalf("members: %s", r.Raw)
	}
	e2e.WantError(t, ts.Do(t, "GET", "/organizations/"+other.OrgID+"/members", viewer, nil), 404, "not_found")
	e2e.WantError(t, ts.Do(t, "GET", "/organizations/"+orgID+"/members", other.Token, nil), 404, "not_found")

	first := ts.Do(t, "GET", "/organizations/"+orgID+"/members?limit=2", ts.Token, nil)
	next := e2e.Field(t, first.Body, "nextCursor")
	if len(e2e.Items(t, first)) != 2 || next == "" {
		t.Fatalf("first page: %s", first.Raw)
	}
	rest := ts.Do(t, "GET", "/organizations/"+orgID+"/members?limit=2&cursor="+next, ts.Token, nil)
	if len(e2e.Items(t, rest)) != 1 || rest.Body["nextCursor"] != nil {
		t.Fatalf("second page: %s", rest.Raw)
	}
	e2e.WantError(t, ts.Do(t, "GET", "/organizations/"+orgID+"/members?cursor="+next, other.Token, nil), 404, "not_found")
}

// TestMemberManagement: owners and admins change roles and remove members, a member leaves, the
// last owner stays; a removed member's token stops working at once and a changed role applies at
// once. It runs on kiln serve and on aws-local.
func TestMemberManagement(t *testing.T) { e2e.Both(t, memberManagement) }

func memberManagement(t *testing.T, dep e2e.Deployment) {
	ts := e2e.StartService(t, dep, e2e.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := e2e.OrgOf(t, ts)
	admin := e2e.AddUser(t, ts, orgID, "admin")
	member := e2e.AddUser(t, ts, orgID, "member")
	viewer := e2e.AddUser(t, ts, orgID, "viewer")
	other := e2e.BootstrapOrg(t, ts, "Elsewhere")
	idOf := func(token string) string {
		t.Helper()
		return e2e.Field(t, ts.Do(t, "GET", "/auth/me", token, nil).Body, "user", "id")
	}
	roleOf := func(token string) string {
		t.Helper()
		return e2e.Field(t, ts.Do(t, "GET", "/auth/me", token, nil).Body, "membership", "role")
	}
	ownerID, adminID, memberID, viewerID := idOf(ts.Token), idOf(admin), idOf(member), idOf(viewer)
	path := func(id string) string { return "/organizations/" + orgID + "/members/" + id }
	role := func(r string) map[string]any { return map[string]any{"role": r} }

	// Who may do what.
	e2e.WantError(t, ts.Do(t, "PATCH", path(viewerID), member, role("member")), 403, "insufficient_scope")
	e2e.WantError(t, ts.Do(t, "DELETE", path(viewerID), member, nil), 403, "insufficient_scope")
	e2e.WantError(t, ts.Do(t, "DELETE", path(viewerID), viewer, nil), 403, "insufficient_scope") // leaving is DELETE .../membership
	e2e.WantError(t, ts.Do(t, "PATCH", path(viewerID), admin, role("owner")), 403, "insufficient_scope")
	e2e.WantError(t, ts.Do(t, "PATCH", path(ownerID), admin, role("viewer")), 403, "insufficient_scope")
	e2e.WantError(t, ts.Do(t, "DELETE", path(ownerID), admin, nil), 403, "insufficient_scope")
	// Bad input changes nothing.
	e2e.WantError(t, ts.Do(t, "PATCH", path(viewerID), admin, role("boss")), 400, "validation_failed")
	e2e.WantError(t, ts.Do(t, "PATCH", path(viewerID), admin, map[string]any{}), 400, "validation_failed")
	e2e.WantError(t, ts.Do(t, "PATCH", path("nobody"), admin, role("member")), 404, "not_found")
	e2e.WantError(t, ts.Do(t, "PATCH", "/organizations/"+other.OrgID+"/members/"+viewerID, ts.Token, role("member")), 404, "not_found")
	e2e.WantError(t, ts.Do(t, "DELETE", "/organizations/"+orgID+"/members/"+idOf(other.Token), ts.Token, nil), 404, "not_found")
	if got := roleOf(viewer); got != "viewer" {
		t.Fatalf("after refused changes the viewer is %q", got)
	}

	// An admin promotes the viewer; the new role applies to their token at once.
	r := ts.Do(t, "PATCH", path(viewerID), admin, role("member"))
	if r.Status != 200 || e2e.Field(t, r.Body, "role") != "member" || e2e.Field(t, r.Body, "user", "id") != viewerID {
		t.Fatalf("admin makes the viewer a member: %d %s", r.Status, r.Raw)
	}
	if got := roleOf(viewer); got != "member" {
		t.Fatalf("the promoted viewer's token acts as %q", got)
	}

	// The only owner can neither step down nor leave; with a second owner they can.
	e2e.WantError(t, ts.Do(t, "PATCH", path(ownerID), ts.Token, role("admin")), 409, "invalid_state")
	e2e.WantError(t, ts.Do(t, "DELETE", "/organizations/"+orgID+"/membership", ts.Token, nil), 409, "invalid_state")
	if r := ts.Do(t, "PATCH", path(adminID), ts.Token, role("owner")); r.Status != 200 {
		t.Fatalf("owner makes the admin an owner: %d %s", r.Status, r.Raw)
	}
	if r := ts.Do(t, "PATCH", path(ownerID), ts.Token, role("admin")); r.Status != 200 {
		t.Fatalf("an owner steps down beside another: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, ts.Do(t, "PATCH", path(viewerID), ts.Token, role("owner")), 403, "insufficient_scope")       // now an admin
	e2e.WantError(t, ts.Do(t, "DELETE", "/organizations/"+orgID+"/membership", admin, nil), 409, "invalid_state") // the last owner cannot leave

	// Removing a member revokes their tokens at once; a member may leave.
	if r := ts.Do(t, "DELETE", path(memberID), ts.Token, nil); r.Status != 204 {
		t.Fatalf("admin removes a member: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, ts.Do(t, "GET", "/auth/me", member, nil), 401, "invalid_token")
	e2e.WantError(t, ts.Do(t, "DELETE", "/organizations/"+other.OrgID+"/membership", viewer, nil), 404, "not_found")
	if r := ts.Do(t, "DELETE", "/organizations/"+orgID+"/membership", viewer, nil); r.Status != 204 {
		t.Fatalf("a member leaves: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, ts.Do(t, "GET", "/auth/me", viewer, nil), 401, "invalid_token")
	list := ts.Do(t, "GET", "/organizations/"+orgID+"/members", admin, nil)
	roles := map[string]string{}
	for _, m := range e2e.Items(t, list) {
		roles[m["user"].(map[string]any)["id"].(string)] = m["role"].(string)
	}
	if len(roles) != 2 || roles[ownerID] != "admin" || roles[adminID] != "owner" {
		t.Fatalf("members after the changes: %s", list.Raw)
	}
}
