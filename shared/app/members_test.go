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
