package api

import (
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestTenantIsolation: a second organization gets 404 for every id and path of the first, and its
// lists hold none of the first's items.
func TestTenantIsolation(t *testing.T) { e2e.Both(t, tenantIsolation) }

func tenantIsolation(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	bid := e2e.Field(t, w.Do(t, "POST", "/projects/"+pid+"/build-settings/"+sid+"/trigger", w.Token, `{}`).Body, "buildId")
	tokenID := e2e.Field(t, w.Do(t, "POST", "/auth/tokens", w.Token, `{"name":"ci"}`).Body, "id")

	rival := e2e.BootstrapOrg(t, w.Server, "Rival Studio")
	// The rival has GitHub linked too (another installation), so GitHub paths reach the id check.
	if r := w.Do(t, "PATCH", "/organizations/"+rival.OrgID, rival.Token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": "9999"}},
	}); r.Status != 200 {
		t.Fatalf("rival link: %d %s", r.Status, r.Raw)
	}
	setting := "/projects/" + pid + "/build-settings/" + sid
	requests := []struct{ method, path, body string }{
		{"GET", "/organizations/" + w.OrgID, ""},
		{"PATCH", "/organizations/" + w.OrgID, `{"name":"Mine now"}`},
		{"DELETE", "/organizations/" + w.OrgID + "/integrations/github", ""},
		{"GET", "/projects/" + pid, ""},
		{"PATCH", "/projects/" + pid, `{"name":"Mine now"}`},
		{"DELETE", "/projects/" + pid, ""},
		{"GET", "/projects/" + pid + "/artifacts", ""},
		{"GET", "/projects/" + pid + "/build-settings", ""},
		{"POST", "/projects/" + pid + "/build-settings", `{"platform":"Linux","buildType":"Shipping","ueVersion":"5.3","trigger":"manual","branch":"main"}`},
		{"GET", setting, ""},
		{"PATCH", setting, `{"branch":"dev"}`},
		{"DELETE", setting, ""},
		{"POST", setting + "/trigger", `{}`},
		{"GET", "/builds/" + bid, ""},
		{"DELETE", "/auth/tokens/" + tokenID, ""},
		{"GET", "/github/repos/" + w.Installation, ""},
		{"GET", "/github/branches/" + w.Installation + "?repoFullName=studio/shooter", ""},
		{"GET", "/github/uproject/" + w.Installation + "?repoFullName=studio/shooter", ""},
		{"POST", "/projects/add-repo", `{"name":"Stolen","installationId":"` + w.Installation + `","repoFullName":"studio/shooter"}`},
	}
	for _, req := range requests {
		t.Run(req.method+" "+req.path, func(t *testing.T) {
			var body any
			if req.body != "" {
				body = req.body
			}
			e2e.WantError(t, w.Do(t, req.method, req.path, rival.Token, body), 404, "not_found")
		})
	}
	for _, list := range []string{"/projects", "/builds", "/builds?projectId=" + pid, "/builds?buildSettingId=" + sid, "/auth/tokens"} {
		r := w.Do(t, "GET", list, rival.Token, nil)
		if r.Status != 200 || strings.Contains(r.Raw, pid) || strings.Contains(r.Raw, bid) || strings.Contains(r.Raw, tokenID) {
			t.Errorf("rival's %s shows the first organization's items: %s", list, r.Raw)
		}
	}
	// And the first organization's things are untouched.
	if r := w.Do(t, "GET", setting, w.Token, nil); r.Status != 200 || e2e.Field(t, r.Body, "branch") != "main" {
		t.Fatalf("setting changed: %s", r.Raw)
	}
	if r := w.Do(t, "GET", "/organizations/"+w.OrgID, w.Token, nil); e2e.Field(t, r.Body, "name") != "Local" || e2e.Field(t, r.Body, "integrationSettings", "github", "installationId") != w.Installation {
		t.Fatalf("organization changed: %s", r.Raw)
	}
}

// TestRoleMatrix: viewers read; members also create, edit and trigger; admins also edit the
// organization and its integrations.
func TestRoleMatrix(t *testing.T) { e2e.Both(t, roleMatrix) }

func roleMatrix(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	setting := "/projects/" + pid + "/build-settings/" + sid
	tokens := map[string]string{"owner": w.Token}
	for _, role := range []string{"admin", "member", "viewer"} {
		tokens[role] = e2e.AddUser(t, w.Server, w.OrgID, role)
	}
	type call struct{ method, path, body string }
	reads := []call{
		{"GET", "/projects", ""}, {"GET", "/projects/" + pid, ""}, {"GET", "/projects/" + pid + "/build-settings", ""},
		{"GET", setting, ""}, {"GET", "/builds", ""}, {"GET", "/projects/" + pid + "/artifacts", ""},
		{"GET", "/organizations/" + w.OrgID, ""}, {"GET", "/github/repos/" + w.Installation, ""},
	}
	writes := []call{
		{"POST", "/projects/add-repo", `{"name":"G","installationId":"` + w.Installation + `","repoFullName":"studio/shooter"}`},
		{"PATCH", "/projects/" + pid, `{"description":"d"}`},
		{"POST", "/projects/" + pid + "/build-settings", `{"platform":"Linux","buildType":"Test","ueVersion":"5.3","trigger":"manual","branch":"main"}`},
		{"PATCH", setting, `{"buildType":"DebugGame"}`},
		{"POST", setting + "/trigger", `{}`},
	}
	admin := []call{
		{"PATCH", "/organizations/" + w.OrgID, `{"name":"Studio"}`},
		{"PATCH", "/organizations/" + w.OrgID, `{"integrationSettings":{"github":{"installationId":"` + w.Installation + `"}}}`},
	}
	allowed := map[string]map[string]bool{
		"owner":  {"read": true, "write": true, "admin": true},
		"admin":  {"read": true, "write": true, "admin": true},
		"member": {"read": true, "write": true},
		"viewer": {"read": true},
	}
	for role, token := range tokens {
		for kind, calls := range map[string][]call{"read": reads, "write": writes, "admin": admin} {
			for _, c := range calls {
				var body any
				if c.body != "" {
					body = c.body
				}
				r := w.Do(t, c.method, c.path, token, body)
				if allowed[role][kind] {
					if r.Status >= 300 {
						t.Errorf("%s %s %s: %d %s", role, c.method, c.path, r.Status, r.Raw)
					}
				} else if r.Status != 403 || r.Body["error"] != "insufficient_scope" {
					t.Errorf("%s %s %s: %d, want 403", role, c.method, c.path, r.Status)
				}
			}
		}
	}
	// Deletes last, as a member (allowed) after a viewer (refused).
	e2e.WantError(t, w.Do(t, "DELETE", setting, tokens["viewer"], nil), 403, "insufficient_scope")
	if r := w.Do(t, "DELETE", setting, tokens["member"], nil); r.Status != 204 {
		t.Fatalf("member delete setting: %d", r.Status)
	}
	e2e.WantError(t, w.Do(t, "DELETE", "/projects/"+pid, tokens["viewer"], nil), 403, "insufficient_scope")
}
