package github

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
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
func (b *installBrowser) get(t *testing.T, w *e2e.World, path, token, accept string) e2e.Response {
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
	r := w.DoRequest(t, req)
	b.jar.SetCookies(req.URL, (&http.Response{Header: r.Header}).Cookies())
	return r
}

// clone is another browser holding this one's install cookie now: one that copied it.
func (b *installBrowser) clone(t *testing.T, w *e2e.World) *installBrowser {
	t.Helper()
	c := newBrowser(t)
	u, _ := url.Parse(w.URL() + "/integrations/github/callback")
	c.jar.SetCookies(u, b.jar.Cookies(u))
	return c
}

// installLink asks for the install link as the console does from this browser, with token, and
// returns the state it carries.
func (b *installBrowser) installLink(t *testing.T, w *e2e.World, token string) string {
	t.Helper()
	r := b.get(t, w, "/integrations/github/install", token, "application/json")
	u, err := url.Parse(e2e.Field(t, r.Body, "url"))
	if r.Status != http.StatusOK || err != nil || u.Query().Get("state") == "" {
		t.Fatalf("install link: %d %s", r.Status, r.Raw)
	}
	return u.Query().Get("state")
}

// callback comes back from GitHub to the install callback in this browser with state and code
// for the test installation; accept is what the client asks for (a browser: text/html).
func (b *installBrowser) callback(t *testing.T, w *e2e.World, state, code, accept string) e2e.Response {
	t.Helper()
	q := url.Values{"state": {state}, "code": {code}, "installation_id": {w.Installation}, "setup_action": {"install"}}
	return b.get(t, w, "/integrations/github/callback?"+q.Encode(), "", accept)
}

const (
	acceptJSON = "application/json"
	acceptHTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
)

// TestInstallStateLinksOnce: the state of an install link links at most once. Replayed after the
// organization unlinked GitHub, even with its browser's cookie, a fresh OAuth code and after a
// restart, its callback links nothing and says why. The browser that linked has lost the cookie.
func TestInstallStateLinksOnce(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.GitHubClientID, c.GitHubClientSecret = "Iv1.test", "client-secret" })
	w.GitHub.ClientID, w.GitHub.ClientSecret = "Iv1.test", "client-secret"
	path := "/organizations/" + w.OrgID
	b := newBrowser(t)
	state := b.installLink(t, w, w.Token)
	replayer := b.clone(t, w)
	for _, code := range []string{"code-1", "code-2", "code-3", "code-4", "code-5"} {
		w.GitHub.AuthorizeUser(code, "gho_installer", e2e.InstallationID)
	}
	if r := b.callback(t, w, state, "code-1", acceptJSON); r.Status != 200 || !w.Linked(t, w.OrgID, w.Token) {
		t.Fatalf("first callback: %d %s", r.Status, r.Raw)
	}
	if r := w.Do(t, "DELETE", path+"/integrations/github", w.Token, nil); r.Status != 204 {
		t.Fatalf("unlink: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, b.callback(t, w, state, "code-2", acceptJSON), 403, "insufficient_scope")
	r := replayer.callback(t, w, state, "code-3", acceptJSON)
	e2e.WantError(t, r, 400, "validation_failed")
	if problem := e2e.Field(t, r.Body, "fields", "state"); problem == "" || w.Linked(t, w.OrgID, w.Token) {
		t.Fatalf("a replayed state: %s (linked %v)", r.Raw, w.Linked(t, w.OrgID, w.Token))
	}
	w.Restart(t)
	e2e.WantError(t, replayer.callback(t, w, state, "code-4", acceptJSON), 400, "validation_failed")
	if w.Linked(t, w.OrgID, w.Token) {
		t.Fatal("a state replayed after a restart linked the installation")
	}
	// A new install link works.
	state = b.installLink(t, w, w.Token)
	if r := b.callback(t, w, state, "code-5", acceptJSON); r.Status != 200 || !w.Linked(t, w.OrgID, w.Token) {
		t.Fatalf("a new install link: %d %s", r.Status, r.Raw)
	}
}
