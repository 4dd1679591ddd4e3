package app

import (
	"net/http"
	"path/filepath"
	"testing"
)

// TestListMembers: every role reads who belongs to its organization and with which role (the
// console's members table); another organization's id is 404; the list pages.
func TestListMembers(t *testing.T) {
	ts := startService(t, testConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := orgOf(t, ts)
	viewer := addUser(t, ts, orgID, "viewer")
	addUser(t, ts, orgID, "admin")
	other := bootstrapOrg(t, ts, "Elsewhere")

	r := ts.do(t, "GET", "/organizations/"+orgID+"/members", viewer, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("viewer lists members: %d %s", r.Status, r.Raw)
	}
	roles := map[string]int{}
	for _, m := range items(t, r) {
		roles[m["role"].(string)]++
	}
	if roles["owner"] != 1 || roles["viewer"] != 1 || roles["admin"] != 1 || len(items(t, r)) != 3 {
		t.Fatalf("members: %s", r.Raw)
	}
	wantError(t, ts.do(t, "GET", "/organizations/"+other.orgID+"/members", viewer, nil), 404, "not_found")
	wantError(t, ts.do(t, "GET", "/organizations/"+orgID+"/members", other.token, nil), 404, "not_found")

	first := ts.do(t, "GET", "/organizations/"+orgID+"/members?limit=2", ts.token, nil)
	next := field(t, first.Body, "nextCursor")
	if len(items(t, first)) != 2 || next == "" {
		t.Fatalf("first page: %s", first.Raw)
	}
	rest := ts.do(t, "GET", "/organizations/"+orgID+"/members?limit=2&cursor="+next, ts.token, nil)
	if len(items(t, rest)) != 1 || rest.Body["nextCursor"] != nil {
		t.Fatalf("second page: %s", rest.Raw)
	}
	wantError(t, ts.do(t, "GET", "/organizations/"+orgID+"/members?cursor="+next, other.token, nil), 404, "not_found")
}

// TestMemberManagement: owners and admins change roles and remove members, a member leaves, the
// last owner stays; a removed member's token stops working at once and a changed role applies at
// once. It runs on kiln serve and, in TestOnAWSLocal, on aws-local.
func TestMemberManagement(t *testing.T) {
	ts := startService(t, testConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := orgOf(t, ts)
	admin := addUser(t, ts, orgID, "admin")
	member := addUser(t, ts, orgID, "member")
	viewer := addUser(t, ts, orgID, "viewer")
	other := bootstrapOrg(t, ts, "Elsewhere")
	idOf := func(token string) string {
		t.Helper()
		return field(t, ts.do(t, "GET", "/auth/me", token, nil).Body, "user", "id")
	}
	roleOf := func(token string) string {
		t.Helper()
		return field(t, ts.do(t, "GET", "/auth/me", token, nil).Body, "membership", "role")
	}
	ownerID, adminID, memberID, viewerID := idOf(ts.token), idOf(admin), idOf(member), idOf(viewer)
	path := func(id string) string { return "/organizations/" + orgID + "/members/" + id }
	role := func(r string) map[string]any { return map[string]any{"role": r} }

	// Who may do what.
	wantError(t, ts.do(t, "PATCH", path(viewerID), member, role("member")), 403, "insufficient_scope")
	wantError(t, ts.do(t, "DELETE", path(viewerID), member, nil), 403, "insufficient_scope")
	wantError(t, ts.do(t, "DELETE", path(viewerID), viewer, nil), 403, "insufficient_scope") // leaving is DELETE .../membership
	wantError(t, ts.do(t, "PATCH", path(viewerID), admin, role("owner")), 403, "insufficient_scope")
	wantError(t, ts.do(t, "PATCH", path(ownerID), admin, role("viewer")), 403, "insufficient_scope")
	wantError(t, ts.do(t, "DELETE", path(ownerID), admin, nil), 403, "insufficient_scope")
	// Bad input changes nothing.
	wantError(t, ts.do(t, "PATCH", path(viewerID), admin, role("boss")), 400, "validation_failed")
	wantError(t, ts.do(t, "PATCH", path(viewerID), admin, map[string]any{}), 400, "validation_failed")
	wantError(t, ts.do(t, "PATCH", path("nobody"), admin, role("member")), 404, "not_found")
	wantError(t, ts.do(t, "PATCH", "/organizations/"+other.orgID+"/members/"+viewerID, ts.token, role("member")), 404, "not_found")
	wantError(t, ts.do(t, "DELETE", "/organizations/"+orgID+"/members/"+idOf(other.token), ts.token, nil), 404, "not_found")
	if got := roleOf(viewer); got != "viewer" {
		t.Fatalf("after refused changes the viewer is %q", got)
	}

	// An admin promotes the viewer; the new role applies to their token at once.
	r := ts.do(t, "PATCH", path(viewerID), admin, role("member"))
	if r.Status != 200 || field(t, r.Body, "role") != "member" || field(t, r.Body, "user", "id") != viewerID {
		t.Fatalf("admin makes the viewer a member: %d %s", r.Status, r.Raw)
	}
	if got := roleOf(viewer); got != "member" {
		t.Fatalf("the promoted viewer's token acts as %q", got)
	}

	// The only owner can neither step down nor leave; with a second owner they can.
	wantError(t, ts.do(t, "PATCH", path(ownerID), ts.token, role("admin")), 409, "invalid_state")
	wantError(t, ts.do(t, "DELETE", "/organizations/"+orgID+"/membership", ts.token, nil), 409, "invalid_state")
	if r := ts.do(t, "PATCH", path(adminID), ts.token, role("owner")); r.Status != 200 {
		t.Fatalf("owner makes the admin an owner: %d %s", r.Status, r.Raw)
	}
	if r := ts.do(t, "PATCH", path(ownerID), ts.token, role("admin")); r.Status != 200 {
		t.Fatalf("an owner steps down beside another: %d %s", r.Status, r.Raw)
	}
	wantError(t, ts.do(t, "PATCH", path(viewerID), ts.token, role("owner")), 403, "insufficient_scope")       // now an admin
	wantError(t, ts.do(t, "DELETE", "/organizations/"+orgID+"/membership", admin, nil), 409, "invalid_state") // the last owner cannot leave

	// Removing a member revokes their tokens at once; a member may leave.
	if r := ts.do(t, "DELETE", path(memberID), ts.token, nil); r.Status != 204 {
		t.Fatalf("admin removes a member: %d %s", r.Status, r.Raw)
	}
	wantError(t, ts.do(t, "GET", "/auth/me", member, nil), 401, "invalid_token")
	wantError(t, ts.do(t, "DELETE", "/organizations/"+other.orgID+"/membership", viewer, nil), 404, "not_found")
	if r := ts.do(t, "DELETE", "/organizations/"+orgID+"/membership", viewer, nil); r.Status != 204 {
		t.Fatalf("a member leaves: %d %s", r.Status, r.Raw)
	}
	wantError(t, ts.do(t, "GET", "/auth/me", viewer, nil), 401, "invalid_token")
	list := ts.do(t, "GET", "/organizations/"+orgID+"/members", admin, nil)
	roles := map[string]string{}
	for _, m := range items(t, list) {
		roles[m["user"].(map[string]any)["id"].(string)] = m["role"].(string)
	}
	if len(roles) != 2 || roles[ownerID] != "admin" || roles[adminID] != "owner" {
		t.Fatalf("members after the changes: %s", list.Raw)
	}
}
