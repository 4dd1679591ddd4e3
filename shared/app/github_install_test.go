package app

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"
)

// installBrowser is one web browser going through GitHub's install flow: its cookie jar keeps what kiln
// sets, as a browser does.
type installBrowser struct{ jar *cookiejar.Jar }

func newBrowser(t *testing.T) *installBrowser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &installBrowser{jar: jar}
}

// get sends GET path from this browser: with its cookies, the bearer token unless "", and accept
// as Accept; it keeps the cookies the answer sets.
func (b *installBrowser) get(t *testing.T, w *world, path, token, accept string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, w.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", accept)
	for _, c := range b.jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	r := w.doRequest(t, req)
	b.jar.SetCookies(req.URL, (&http.Response{Header: r.Header}).Cookies())
	return r
}

// clone is another browser holding this one's install cookie now: one that copied it.
func (b *installBrowser) clone(t *testing.T, w *world) *installBrowser {
	t.Helper()
	c := newBrowser(t)
	u, _ := url.Parse(w.URL() + "/integrations/github/callback")
	c.jar.SetCookies(u, b.jar.Cookies(u))
	return c
}

// installLink asks for the install link as the console does from this browser, with token, and
// returns the state it carries.
func (b *installBrowser) installLink(t *testing.T, w *world, token string) string {
	t.Helper()
	r := b.get(t, w, "/integrations/github/install", token, "application/json")
	u, err := url.Parse(field(t, r.Body, "url"))
	if r.Status != http.StatusOK || err != nil || u.Query().Get("state") == "" {
		t.Fatalf("install link: %d %s", r.Status, r.Raw)
	}
	return u.Query().Get("state")
}

// callback comes back from GitHub to the install callback in this browser with state and code
// for the test installation; accept is what the client asks for (a browser: text/html).
func (b *installBrowser) callback(t *testing.T, w *world, state, code, accept string) response {
	t.Helper()
	q := url.Values{"state": {state}, "code": {code}, "installation_id": {w.inst}, "setup_action": {"install"}}
	return b.get(t, w, "/integrations/github/callback?"+q.Encode(), "", accept)
}

// linked reports whether the world's organization has GitHub linked, as token sees it.
func (w *world) linked(t *testing.T, orgID, token string) bool {
	t.Helper()
	return w.do(t, "GET", "/organizations/"+orgID, token, nil).Body["integrationSettings"].(map[string]any)["github"] != nil
}

const (
	acceptJSON = "application/json"
	acceptHTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
)

// TestInstallStateLinksOnce: the state of an install link links at most once. Replayed after the
// organization unlinked GitHub, even with its browser's cookie, a fresh OAuth code and after a
// restart, its callback links nothing and says why. The browser that linked has lost the cookie.
func TestInstallStateLinksOnce(t *testing.T) {
	w := newWorld(t, func(c *Config) { c.GitHubClientID, c.GitHubClientSecret = "Iv1.test", "client-secret" })
	w.gh.ClientID, w.gh.ClientSecret = "Iv1.test", "client-secret"
	path := "/organizations/" + w.orgID
	b := newBrowser(t)
	state := b.installLink(t, w, w.token)
	replayer := b.clone(t, w)
	for _, code := range []string{"code-1", "code-2", "code-3", "code-4", "code-5"} {
		w.gh.AuthorizeUser(code, "gho_installer", testInstallation)
	}
	if r := b.callback(t, w, state, "code-1", acceptJSON); r.Status != 200 || !w.linked(t, w.orgID, w.token) {
		t.Fatalf("first callback: %d %s", r.Status, r.Raw)
	}
	if r := w.do(t, "DELETE", path+"/integrations/github", w.token, nil); r.Status != 204 {
		t.Fatalf("unlink: %d %s", r.Status, r.Raw)
	}
	wantError(t, b.callback(t, w, state, "code-2", acceptJSON), 403, "insufficient_scope")
	r := replayer.callback(t, w, state, "code-3", acceptJSON)
	wantError(t, r, 400, "validation_failed")
	if problem := field(t, r.Body, "fields", "state"); problem == "" || w.linked(t, w.orgID, w.token) {
		t.Fatalf("a replayed state: %s (linked %v)", r.Raw, w.linked(t, w.orgID, w.token))
	}
	w.restart(t)
	wantError(t, replayer.callback(t, w, state, "code-4", acceptJSON), 400, "validation_failed")
	if w.linked(t, w.orgID, w.token) {
		t.Fatal("a state replayed after a restart linked the installation")
	}
	// A new install link works.
	state = b.installLink(t, w, w.token)
	if r := b.callback(t, w, state, "code-5", acceptJSON); r.Status != 200 || !w.linked(t, w.orgID, w.token) {
		t.Fatalf("a new install link: %d %s", r.Status, r.Raw)
	}
}
