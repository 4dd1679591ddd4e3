package app

import (
	"net/url"
	"testing"
)

// TestInstallStateLinksOnce: the state of an install link links at most once. Replayed after the
// organization unlinked GitHub, even with a fresh OAuth code and after a restart, its callback
// links nothing and says why.
func TestInstallStateLinksOnce(t *testing.T) {
	w := newWorld(t, func(c *Config) { c.GitHubClientID, c.GitHubClientSecret = "Iv1.test", "client-secret" })
	w.gh.ClientID, w.gh.ClientSecret = "Iv1.test", "client-secret"
	path := "/organizations/" + w.orgID
	r := w.do(t, "GET", "/integrations/github/install", w.token, nil)
	installURL, err := url.Parse(field(t, r.Body, "url"))
	if err != nil {
		t.Fatal(err)
	}
	state := installURL.Query().Get("state")
	callback := func(code string) response {
		q := url.Values{"state": {state}, "code": {code}, "installation_id": {w.inst}, "setup_action": {"install"}}
		return w.do(t, "GET", "/integrations/github/callback?"+q.Encode(), "", nil)
	}
	linked := func() bool {
		return w.do(t, "GET", path, w.token, nil).Body["integrationSettings"].(map[string]any)["github"] != nil
	}
	w.gh.AuthorizeUser("code-1", "gho_installer", testInstallation)
	w.gh.AuthorizeUser("code-2", "gho_installer", testInstallation)
	w.gh.AuthorizeUser("code-3", "gho_installer", testInstallation)
	w.gh.AuthorizeUser("code-4", "gho_installer", testInstallation)
	if r := callback("code-1"); r.Status != 200 || !linked() {
		t.Fatalf("first callback: %d %s", r.Status, r.Raw)
	}
	if r := w.do(t, "DELETE", path+"/integrations/github", w.token, nil); r.Status != 204 {
		t.Fatalf("unlink: %d %s", r.Status, r.Raw)
	}
	r = callback("code-2")
	wantError(t, r, 400, "validation_failed")
	if problem := field(t, r.Body, "fields", "state"); problem == "" || linked() {
		t.Fatalf("a replayed state: %s (linked %v)", r.Raw, linked())
	}
	w.restart(t)
	wantError(t, callback("code-3"), 400, "validation_failed")
	if linked() {
		t.Fatal("a state replayed after a restart linked the installation")
	}
	// A new install link works.
	r = w.do(t, "GET", "/integrations/github/install", w.token, nil)
	installURL, _ = url.Parse(field(t, r.Body, "url"))
	state = installURL.Query().Get("state")
	if r := callback("code-4"); r.Status != 200 || !linked() {
		t.Fatalf("a new install link: %d %s", r.Status, r.Raw)
	}
}
