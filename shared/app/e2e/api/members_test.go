package api

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/kilnbuild/kiln/shared/app/apptest"
)

// TestListMembers: every role reads who belongs to its organization and with which role (the
// console's members table); another organization's id is 404; the list pages.
func TestListMembers(t *testing.T) {
	t.Parallel()
	ts := apptest.StartService(t, apptest.Serve, apptest.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := apptest.OrgOf(t, ts)
	viewer := apptest.AddUser(t, ts, orgID, "viewer")
	apptest.AddUser(t, ts, orgID, "admin")
	other := apptest.BootstrapOrg(t, ts, "Elsewhere")

	r := ts.Do(t, "GET", "/organizations/"+orgID+"/members", viewer, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("viewer lists members: %d %s", r.Status, r.Raw)
	}
	roles := map[string]int{}
	for _, m := range apptest.Items(t, r) {
		roles[m["role"].(string)]++
	}
	if roles["owner"] != 1 || roles["viewer"] != 1 || roles["admin"] != 1 || len(apptest.Items(t, r)) != 3 {
		t.Fatalf("members: %s", r.Raw)
	}
	apptest.WantError(t, ts.Do(t, "GET", "/organizations/"+other.OrgID+"/members", viewer, nil), 404, "not_found")
	apptest.WantError(t, ts.Do(t, "GET", "/organizations/"+orgID+"/members", other.Token, nil), 404, "not_found")

	first := ts.Do(t, "GET", "/organizations/"+orgID+"/members?limit=2", ts.Token, nil)
	next := apptest.Field(t, first.Body, "nextCursor")
	if len(apptest.Items(t, first)) != 2 || next == "" {
		t.Fatalf("first page: %s", first.Raw)
	}
	rest := ts.Do(t, "GET", "/organizations/"+orgID+"/members?limit=2&cursor="+next, ts.Token, nil)
	if len(apptest.Items(t, rest)) != 1 || rest.Body["nextCursor"] != nil {
		t.Fatalf("second page: %s", rest.Raw)
	}
	apptest.WantError(t, ts.Do(t, "GET", "/organizations/"+orgID+"/members?cursor="+next, other.Token, nil), 404, "not_found")
}

// TestMemberManagement: owners and admins change roles and remove members, a member leaves, the
// last owner stays; a removed member's token stops working at once and a changed role applies at
// once. It runs on kiln serve and on aws-local.
func TestMemberManagement(t *testing.T) { apptest.Both(t, memberManagement) }

func memberManagement(t *testing.T, dep apptest.Deployment) {
	ts := apptest.StartService(t, dep, apptest.NewConfig(t, filepath.Join(t.TempDir(), "data")))
	orgID := apptest.OrgOf(t, ts)
	admin := apptest.AddUser(t, ts, orgID, "admin")
	member := apptest.AddUser(t, ts, orgID, "member")
	viewer := apptest.AddUser(t, ts, orgID, "viewer")
	other := apptest.BootstrapOrg(t, ts, "Elsewhere")
	idOf := func(token string) string {
		t.Helper()
		return apptest.Field(t, ts.Do(t, "GET", "/auth/me", token, nil).Body, "user", "id")
	}
	roleOf := func(token string) string {
		t.Helper()
		return apptest.Field(t, ts.Do(t, "GET", "/auth/me", token, nil).Body, "membership", "role")
	}
	ownerID, adminID, memberID, viewerID := idOf(ts.Token), idOf(admin), idOf(member), idOf(viewer)
	path := func(id string) string { return "/organizations/" + orgID + "/members/" + id }
	role := func(r string) map[string]any { return map[string]any{"role": r} }

	// Who may do what.
	apptest.WantError(t, ts.Do(t, "PATCH", path(viewerID), member, role("member")), 403, "insufficient_scope")
	apptest.WantError(t, ts.Do(t, "DELETE", path(viewerID), member, nil), 403, "insufficient_scope")
	apptest.WantError(t, ts.Do(t, "DELETE", path(viewerID), viewer, nil), 403, "insufficient_scope") // leaving is DELETE .../membership
	apptest.WantError(t, ts.Do(t, "PATCH", path(viewerID), admin, role("owner")), 403, "insufficient_scope")
	apptest.WantError(t, ts.Do(t, "PATCH", path(ownerID), admin, role("viewer")), 403, "insufficient_scope")
	apptest.WantError(t, ts.Do(t, "DELETE", path(ownerID), admin, nil), 403, "insufficient_scope")
	// Bad input changes nothing.
	apptest.WantError(t, ts.Do(t, "PATCH", path(viewerID), admin, role("boss")), 400, "validation_failed")
	apptest.WantError(t, ts.Do(t, "PATCH", path(viewerID), admin, map[string]any{}), 400, "validation_failed")
	apptest.WantError(t, ts.Do(t, "PATCH", path("nobody"), admin, role("member")), 404, "not_found")
	apptest.WantError(t, ts.Do(t, "PATCH", "/organizations/"+other.OrgID+"/members/"+viewerID, ts.Token, role("member")), 404, "not_found")
	apptest.WantError(t, ts.Do(t, "DELETE", "/organizations/"+orgID+"/members/"+idOf(other.Token), ts.Token, nil), 404, "not_found")
	if got := roleOf(viewer); got != "viewer" {
		t.Fatalf("after refused changes the viewer is %q", got)
	}

	// An admin promotes the viewer; the new role applies to their token at once.
	r := ts.Do(t, "PATCH", path(viewerID), admin, role("member"))
	if r.Status != 200 || apptest.Field(t, r.Body, "role") != "member" || apptest.Field(t, r.Body, "user", "id") != viewerID {
		t.Fatalf("admin makes the viewer a member: %d %s", r.Status, r.Raw)
	}
	if got := roleOf(viewer); got != "member" {
		t.Fatalf("the promoted viewer's token acts as %q", got)
	}

	// The only owner can neither step down nor leave; with a second owner they can.
	apptest.WantError(t, ts.Do(t, "PATCH", path(ownerID), ts.Token, role("admin")), 409, "invalid_state")
	apptest.WantError(t, ts.Do(t, "DELETE", "/organizations/"+orgID+"/membership", ts.Token, nil), 409, "invalid_state")
	if r := ts.Do(t, "PATCH", path(adminID), ts.Token, role("owner")); r.Status != 200 {
		t.Fatalf("owner makes the admin an owner: %d %s", r.Status, r.Raw)
	}
	if r := ts.Do(t, "PATCH", path(ownerID), ts.Token, role("admin")); r.Status != 200 {
		t.Fatalf("an owner steps down beside another: %d %s", r.Status, r.Raw)
	}
	apptest.WantError(t, ts.Do(t, "PATCH", path(viewerID), ts.Token, role("owner")), 403, "insufficient_scope")       // now an admin
	apptest.WantError(t, ts.Do(t, "DELETE", "/organizations/"+orgID+"/membership", admin, nil), 409, "invalid_state") // the last owner cannot leave

	// Removing a member revokes their tokens at once; a member may leave.
	if r := ts.Do(t, "DELETE", path(memberID), ts.Token, nil); r.Status != 204 {
		t.Fatalf("admin removes a member: %d %s", r.Status, r.Raw)
	}
	apptest.WantError(t, ts.Do(t, "GET", "/auth/me", member, nil), 401, "invalid_token")
	apptest.WantError(t, ts.Do(t, "DELETE", "/organizations/"+other.OrgID+"/membership", viewer, nil), 404, "not_found")
	if r := ts.Do(t, "DELETE", "/organizations/"+orgID+"/membership", viewer, nil); r.Status != 204 {
		t.Fatalf("a member leaves: %d %s", r.Status, r.Raw)
	}
	apptest.WantError(t, ts.Do(t, "GET", "/auth/me", viewer, nil), 401, "invalid_token")
	list := ts.Do(t, "GET", "/organizations/"+orgID+"/members", admin, nil)
	roles := map[string]string{}
	for _, m := range apptest.Items(t, list) {
		roles[m["user"].(map[string]any)["id"].(string)] = m["role"].(string)
	}
	if len(roles) != 2 || roles[ownerID] != "admin" || roles[adminID] != "owner" {
		t.Fatalf("members after the changes: %s", list.Raw)
	}
}
