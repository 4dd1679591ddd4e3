package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

func TestLinkGitHubByID(t *testing.T) {
	w := newWorld(t)
	path := "/organizations/" + w.orgID
	link := func(token, id string) response {
		return w.do(t, "PATCH", path, token, map[string]any{"integrationSettings": map[string]any{"github": map[string]any{"installationId": id}}})
	}
	wantError(t, link(w.token, "777"), 400, "github_installation_invalid")
	wantError(t, link(w.token, "abc"), 400, "validation_failed")
	r := link(w.token, w.inst)
	if r.Status != 200 || field(t, r.Body, "integrationSettings", "github", "installationId") != w.inst {
		t.Fatalf("link: %d %s", r.Status, r.Raw)
	}
	if r := link(w.token, w.inst); r.Status != 200 {
		t.Fatalf("linking again: %d %s", r.Status, r.Raw)
	}
	other := bootstrapOrg(t, w.testService, "Rival")
	wantError(t, w.do(t, "PATCH", "/organizations/"+other.orgID, other.token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": w.inst}},
	}), 409, "github_installation_in_use")
	member := addUser(t, w.testService, w.orgID, "member")
	wantError(t, link(member, w.inst), 403, "insufficient_scope")

	if r := w.do(t, "DELETE", path+"/integrations/github", w.token, nil); r.Status != 204 {
		t.Fatalf("unlink: %d %s", r.Status, r.Raw)
	}
	if got := w.do(t, "GET", path, w.token, nil); got.Body["integrationSettings"].(map[string]any)["github"] != nil {
		t.Fatalf("still linked: %s", got.Raw)
	}
	wantError(t, w.do(t, "GET", "/github/repos/"+w.inst, w.token, nil), 409, "github_not_connected")
	// Once freed, another organization may link it.
	if r := w.do(t, "PATCH", "/organizations/"+other.orgID, other.token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": w.inst}},
	}); r.Status != 200 {
		t.Fatalf("link after unlink: %d %s", r.Status, r.Raw)
	}
}

func TestLinkGitHubThroughTheInstallFlow(t *testing.T) {
	var gh *githubtest.Server
	w := newWorld(t, func(c *Config) { c.GitHubClientID, c.GitHubClientSecret = "Iv1.test", "client-secret" })
	gh = w.gh
	gh.ClientID, gh.ClientSecret = "Iv1.test", "client-secret"
	path := "/organizations/" + w.orgID
	r := w.do(t, "PATCH", path, w.token, map[string]any{"integrationSettings": map[string]any{"github": map[string]any{"installationId": w.inst}}})
	wantError(t, r, 400, "validation_failed")
	if _, ok := r.Body["fields"].(map[string]any)["integrationSettings"]; !ok {
		t.Fatalf("fields do not name integrationSettings: %s", r.Raw)
	}
	wantError(t, w.do(t, "GET", "/integrations/github/install", addUser(t, w.testService, w.orgID, "member"), nil), 403, "insufficient_scope")

	b := newBrowser(t)
	r = b.get(t, w, "/integrations/github/install", w.token, acceptJSON)
	installURL, err := url.Parse(field(t, r.Body, "url"))
	if r.Status != 200 || err != nil || !strings.HasPrefix(installURL.String(), gh.WebURL()+"apps/") {
		t.Fatalf("install link: %d %s", r.Status, r.Raw)
	}
	state := installURL.Query().Get("state")
	gh.AuthorizeUser("good-code", "gho_installer", testInstallation)
	gh.AuthorizeUser("stranger-code", "gho_stranger", 9999)
	wantError(t, b.callback(t, w, state[:len(state)-3]+"AAA", "good-code", acceptJSON), 400, "validation_failed")
	wantError(t, b.callback(t, w, state, "stranger-code", acceptJSON), 400, "github_installation_invalid")
	if w.linked(t, w.orgID, w.token) {
		t.Fatalf("linked by a user who cannot see the installation")
	}
	r = b.callback(t, w, state, "good-code", acceptJSON)
	if r.Status != 200 || field(t, r.Body, "integrationSettings", "github", "installationId") != w.inst {
		t.Fatalf("callback: %d %s", r.Status, r.Raw)
	}
	if r := w.do(t, "GET", "/github/repos/"+w.inst, w.token, nil); r.Status != 200 {
		t.Fatalf("relay after install: %d %s", r.Status, r.Raw)
	}
}

func TestGitHubRelays(t *testing.T) {
	w := newWorld(t)
	wantError(t, w.do(t, "GET", "/github/repos/"+w.inst, w.token, nil), 409, "github_not_connected")
	w.link(t)
	wantError(t, w.do(t, "GET", "/github/repos/9999", w.token, nil), 404, "not_found")

	r := w.do(t, "GET", "/github/repos/"+w.inst+"?limit=3", w.token, nil)
	got := items(t, r)
	if r.Status != 200 || len(got) != 3 {
		t.Fatalf("repos: %d %s", r.Status, r.Raw)
	}
	all := append([]map[string]any{}, got...)
	next := r.Body["nextCursor"].(string)
	r = w.do(t, "GET", "/github/repos/"+w.inst+"?limit=3&cursor="+url.QueryEscape(next), w.token, nil)
	all = append(all, items(t, r)...)
	if r.Body["nextCursor"] != nil || len(all) != 4 {
		t.Fatalf("second page: %s", r.Raw)
	}
	detected := map[string]bool{}
	for _, it := range all {
		detected[it["fullName"].(string)] = it["uprojectDetected"].(bool)
	}
	want := map[string]bool{"studio/deep": false, "studio/multi": true, "studio/shooter": true, "studio/tools": false}
	for name, d := range want {
		if v, ok := detected[name]; !ok || v != d {
			t.Errorf("%s uprojectDetected = %v (listed %v), want %v", name, v, ok, d)
		}
	}

	r = w.do(t, "GET", "/github/branches/"+w.inst+"?repoFullName=studio/shooter", w.token, nil)
	branches := items(t, r)
	if r.Status != 200 || len(branches) != 4 {
		t.Fatalf("branches: %d %s", r.Status, r.Raw)
	}
	for _, b := range branches {
		c := b["commit"].(map[string]any)
		if b["name"] == "dev" && (c["message"] != "Faster reloads" || c["author"] != "Grace Hopper" || len(c["sha"].(string)) != 40 || b["isDefault"] != false) {
			t.Errorf("dev branch: %v", b)
		}
		if b["name"] == "main" && b["isDefault"] != true {
			t.Errorf("main is not default: %v", b)
		}
	}
	r = w.do(t, "GET", "/github/branches/"+w.inst+"?repoFullName=studio/shooter&q=RELOAD", w.token, nil)
	if got := items(t, r); len(got) != 1 || got[0]["name"] != "feature/Reload-UI" {
		t.Fatalf("q=RELOAD: %s", r.Raw)
	}
	wantError(t, w.do(t, "GET", "/github/branches/"+w.inst, w.token, nil), 400, "validation_failed")
	wantError(t, w.do(t, "GET", "/github/branches/"+w.inst+"?repoFullName=someone-else/secret", w.token, nil), 409, "repo_not_accessible")

	r = w.do(t, "GET", "/github/uproject/"+w.inst+"?repoFullName=studio/shooter", w.token, nil)
	if r.Status != 200 || field(t, r.Body, "path") != "Shooter/Shooter.uproject" || field(t, r.Body, "projectName") != "Shooter" || field(t, r.Body, "engineVersion") != "5.3" {
		t.Fatalf("uproject: %d %s", r.Status, r.Raw)
	}
	if mods := r.Body["modules"].([]any); len(mods) != 1 || mods[0].(map[string]any)["loadingPhase"] != "Default" {
		t.Errorf("modules: %v", mods)
	}
	if plugins := r.Body["plugins"].([]any); len(plugins) != 2 || plugins[1].(map[string]any)["enabled"] != false {
		t.Errorf("plugins: %v", plugins)
	}
	wantError(t, w.do(t, "GET", "/github/uproject/"+w.inst+"?repoFullName=studio/tools", w.token, nil), 404, "uproject_not_found")
	wantError(t, w.do(t, "GET", "/github/uproject/"+w.inst+"?repoFullName=studio/deep", w.token, nil), 404, "uproject_not_found")
	r = w.do(t, "GET", "/github/uproject/"+w.inst+"?repoFullName=studio/multi", w.token, nil)
	wantError(t, r, 409, "multiple_uprojects")
	if c := r.Body["candidates"].([]any); len(c) != 2 || c[0] != "A/A.uproject" || c[1] != "B/B.uproject" {
		t.Errorf("candidates %v", c)
	}

	w.gh.Fail(githubtest.RouteInstallationRepos, http.StatusInternalServerError)
	r = w.do(t, "GET", "/github/repos/"+w.inst+"?limit=1", w.token, nil)
	wantError(t, r, 502, "github_unavailable")
}
