package github

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

func TestLinkGitHubByID(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	path := "/organizations/" + w.OrgID
	link := func(token, id string) e2e.Response {
		return w.Do(t, "PATCH", path, token, map[string]any{"integrationSettings": map[string]any{"github": map[string]any{"installationId": id}}})
	}
	e2e.WantError(t, link(w.Token, "777"), 400, "github_installation_invalid")
	e2e.WantError(t, link(w.Token, "abc"), 400, "validation_failed")
	r := link(w.Token, w.Installation)
	if r.Status != 200 || e2e.Field(t, r.Body, "integrationSettings", "github", "installationId") != w.Installation {
		t.Fatalf("link: %d %s", r.Status, r.Raw)
	}
	if r := link(w.Token, w.Installation); r.Status != 200 {
		t.Fatalf("linking again: %d %s", r.Status, r.Raw)
	}
	other := e2e.BootstrapOrg(t, w.Server, "Rival")
	e2e.WantError(t, w.Do(t, "PATCH", "/organizations/"+other.OrgID, other.Token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": w.Installation}},
	}), 409, "github_installation_in_use")
	member := e2e.AddUser(t, w.Server, w.OrgID, "member")
	e2e.WantError(t, link(member, w.Installation), 403, "insufficient_scope")

	if r := w.Do(t, "DELETE", path+"/integrations/github", w.Token, nil); r.Status != 204 {
		t.Fatalf("unlink: %d %s", r.Status, r.Raw)
	}
	if got := w.Do(t, "GET", path, w.Token, nil); got.Body["integrationSettings"].(map[string]any)["github"] != nil {
		t.Fatalf("still linked: %s", got.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/github/repos/"+w.Installation, w.Token, nil), 409, "github_not_connected")
	// Once freed, another organization may link it.
	if r := w.Do(t, "PATCH", "/organizations/"+other.OrgID, other.Token, map[string]any{
		"integrationSettings": map[string]any{"github": map[string]any{"installationId": w.Installation}},
	}); r.Status != 200 {
		t.Fatalf("link after unlink: %d %s", r.Status, r.Raw)
	}
}

func TestLinkGitHubThroughTheInstallFlow(t *testing.T) {
	t.Parallel()
	var gh *githubtest.Server
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.GitHubClientID, c.GitHubClientSecret = "Iv1.test", "client-secret" })
	gh = w.GitHub
	gh.ClientID, gh.ClientSecret = "Iv1.test", "client-secret"
	path := "/organizations/" + w.OrgID
	r := w.Do(t, "PATCH", path, w.Token, map[string]any{"integrationSettings": map[string]any{"github": map[string]any{"installationId": w.Installation}}})
	e2e.WantError(t, r, 400, "validation_failed")
	if _, ok := r.Body["fields"].(map[string]any)["integrationSettings"]; !ok {
		t.Fatalf("fields do not name integrationSettings: %s", r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/integrations/github/install", e2e.AddUser(t, w.Server, w.OrgID, "member"), nil), 403, "insufficient_scope")

	b := newBrowser(t)
	r = b.get(t, w, "/integrations/github/install", w.Token, acceptJSON)
	installURL, err := url.Parse(e2e.Field(t, r.Body, "url"))
	if r.Status != 200 || err != nil || !strings.HasPrefix(installURL.String(), gh.WebURL()+"apps/") {
		t.Fatalf("install link: %d %s", r.Status, r.Raw)
	}
	state := installURL.Query().Get("state")
	gh.AuthorizeUser("good-code", "gho_installer", e2e.InstallationID)
	gh.AuthorizeUser("stranger-code", "gho_stranger", 9999)
	e2e.WantError(t, b.callback(t, w, state[:len(state)-3]+"AAA", "good-code", acceptJSON), 400, "validation_failed")
	e2e.WantError(t, b.callback(t, w, state, "stranger-code", acceptJSON), 400, "github_installation_invalid")
	if w.Linked(t, w.OrgID, w.Token) {
		t.Fatalf("linked by a user who cannot see the installation")
	}
	r = b.callback(t, w, state, "good-code", acceptJSON)
	if r.Status != 200 || e2e.Field(t, r.Body, "integrationSettings", "github", "installationId") != w.Installation {
		t.Fatalf("callback: %d %s", r.Status, r.Raw)
	}
	if r := w.Do(t, "GET", "/github/repos/"+w.Installation, w.Token, nil); r.Status != 200 {
		t.Fatalf("relay after install: %d %s", r.Status, r.Raw)
	}
}

func TestGitHubRelays(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	e2e.WantError(t, w.Do(t, "GET", "/github/repos/"+w.Installation, w.Token, nil), 409, "github_not_connected")
	w.Link(t)
	e2e.WantError(t, w.Do(t, "GET", "/github/repos/9999", w.Token, nil), 404, "not_found")

	r := w.Do(t, "GET", "/github/repos/"+w.Installation+"?limit=3", w.Token, nil)
	got := e2e.Items(t, r)
	if r.Status != 200 || len(got) != 3 {
		t.Fatalf("repos: %d %s", r.Status, r.Raw)
	}
	all := append([]map[string]any{}, got...)
	next := r.Body["nextCursor"].(string)
	r = w.Do(t, "GET", "/github/repos/"+w.Installation+"?limit=3&cursor="+url.QueryEscape(next), w.Token, nil)
	all = append(all, e2e.Items(t, r)...)
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

	r = w.Do(t, "GET", "/github/branches/"+w.Installation+"?repoFullName=studio/shooter", w.Token, nil)
	branches := e2e.Items(t, r)
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
	r = w.Do(t, "GET", "/github/branches/"+w.Installation+"?repoFullName=studio/shooter&q=RELOAD", w.Token, nil)
	if got := e2e.Items(t, r); len(got) != 1 || got[0]["name"] != "feature/Reload-UI" {
		t.Fatalf("q=RELOAD: %s", r.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/github/branches/"+w.Installation, w.Token, nil), 400, "validation_failed")
	e2e.WantError(t, w.Do(t, "GET", "/github/branches/"+w.Installation+"?repoFullName=someone-else/secret", w.Token, nil), 409, "repo_not_accessible")

	r = w.Do(t, "GET", "/github/uproject/"+w.Installation+"?repoFullName=studio/shooter", w.Token, nil)
	if r.Status != 200 || e2e.Field(t, r.Body, "path") != "Shooter/Shooter.uproject" || e2e.Field(t, r.Body, "projectName") != "Shooter" || e2e.Field(t, r.Body, "engineVersion") != "5.3" {
		t.Fatalf("uproject: %d %s", r.Status, r.Raw)
	}
	if mods := r.Body["modules"].([]any); len(mods) != 1 || mods[0].(map[string]any)["loadingPhase"] != "Default" {
		t.Errorf("modules: %v", mods)
	}
	if plugins := r.Body["plugins"].([]any); len(plugins) != 2 || plugins[1].(map[string]any)["enabled"] != false {
		t.Errorf("plugins: %v", plugins)
	}
	e2e.WantError(t, w.Do(t, "GET", "/github/uproject/"+w.Installation+"?repoFullName=studio/tools", w.Token, nil), 404, "uproject_not_found")
	e2e.WantError(t, w.Do(t, "GET", "/github/uproject/"+w.Installation+"?repoFullName=studio/deep", w.Token, nil), 404, "uproject_not_found")
	r = w.Do(t, "GET", "/github/uproject/"+w.Installation+"?repoFullName=studio/multi", w.Token, nil)
	e2e.WantError(t, r, 409, "multiple_uprojects")
	if c := r.Body["candidates"].([]any); len(c) != 2 || c[0] != "A/A.uproject" || c[1] != "B/B.uproject" {
		t.Errorf("candidates %v", c)
	}

	w.GitHub.Fail(githubtest.RouteInstallationRepos, http.StatusInternalServerError)
	r = w.Do(t, "GET", "/github/repos/"+w.Installation+"?limit=1", w.Token, nil)
	e2e.WantError(t, r, 502, "github_unavailable")
}
