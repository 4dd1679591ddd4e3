package github

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// installWorld is a world whose service has the GitHub App's OAuth client: linking goes through
// GitHub's install flow.
func installWorld(t *testing.T, dep e2e.Deployment) *e2e.World {
	t.Helper()
	w := e2e.NewWorld(t, dep, func(c *serve.Config) { c.GitHubClientID, c.GitHubClientSecret = "Iv1.test", "client-secret" })
	w.GitHub.ClientID, w.GitHub.ClientSecret = "Iv1.test", "client-secret"
	return w
}

// TestGitHubInstallRefusesAnotherBrowser is the forged install: the admin of an organization gets
// an install link and sends it to someone who can install the App on their own GitHub account.
// That person's click on "Install" comes back in their browser, without the admin's cookie, with
// their own GitHub code: refused, nothing linked, and the organization cannot list their
// repositories. The link still works in the admin's browser (the admin here has no GitHub
// identity: linked in by an API token). It runs on kiln serve and on
// aws-local.
func TestGitHubInstallRefusesAnotherBrowser(t *testing.T) {
	e2e.Both(t, gitHubInstallRefusesAnotherBrowser)
}

func gitHubInstallRefusesAnotherBrowser(t *testing.T, dep e2e.Deployment) {
	w := installWorld(t, dep)
	admin := newBrowser(t)
	state := admin.installLink(t, w, w.Token)
	otherAdmin := e2e.AddUser(t, w.Server, w.OrgID, "admin")
	callbackURL, _ := url.Parse(w.URL() + "/integrations/github/callback")
	for _, tc := range []struct {
		name    string
		browser func() *installBrowser
	}{
		{"no cookie", func() *installBrowser { return newBrowser(t) }},
		{"the cookie of another install link", func() *installBrowser {
			b := newBrowser(t)
			b.installLink(t, w, otherAdmin)
			return b
		}},
		{"a cookie made up", func() *installBrowser {
			b := newBrowser(t)
			b.jar.SetCookies(callbackURL, []*http.Cookie{{Name: "kiln_github_install", Value: strings.Repeat("A", 43)}})
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := "victim-" + strings.ReplaceAll(tc.name, " ", "-")
			w.GitHub.AuthorizeUser(code, "gho_victim", e2e.InstallationID)
			r := tc.browser().callback(t, w, state, code, acceptJSON)
			e2e.WantError(t, r, http.StatusForbidden, "insufficient_scope")
			if msg := e2e.Field(t, r.Body, "message"); !strings.Contains(msg, "another browser") {
				t.Errorf("the refusal does not say why: %s", msg)
			}
			if w.Linked(t, w.OrgID, w.Token) {
				t.Fatal("another browser linked the installation")
			}
			e2e.WantError(t, w.Do(t, "GET", "/github/repos/"+w.Installation, w.Token, nil), http.StatusConflict, "github_not_connected")
		})
	}

	// The state was not used up: in the admin's own browser it links.
	w.GitHub.AuthorizeUser("admin-code", "gho_admin", e2e.InstallationID)
	if r := admin.callback(t, w, state, "admin-code", acceptJSON); r.Status != http.StatusOK ||
		e2e.Field(t, r.Body, "integrationSettings", "github", "installationId") != w.Installation {
		t.Fatalf("the admin's own browser: %d %s", r.Status, r.Raw)
	}
	if r := w.Do(t, "GET", "/github/repos/"+w.Installation, w.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("repositories after the install: %d %s", r.Status, r.Raw)
	}
}

// TestGitHubInstallNeedsTheAdminsGitHubAccount: with GitHub sign-in on, Ada (signed in with
// GitHub) starts the install in her browser, but the GitHub account that installs is Grace's, or
// one GitHub does not say: refused, nothing linked, and her link still works for her own account.
// It runs on kiln serve and on aws-local.
func TestGitHubInstallNeedsTheAdminsGitHubAccount(t *testing.T) {
	e2e.Both(t, gitHubInstallNeedsTheAdminsGitHubAccount)
}

func gitHubInstallNeedsTheAdminsGitHubAccount(t *testing.T, dep e2e.Deployment) {
	w := e2e.SignUpWorld(t, dep)
	ada := e2e.SignIn(t, w, "ada")
	r := w.Do(t, "POST", "/organizations", ada, map[string]any{"name": "Analytical Games"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create organization: %d %s", r.Status, r.Raw)
	}
	orgID := e2e.Field(t, r.Body, "id")
	b := newBrowser(t)
	state := b.installLink(t, w, ada)
	w.GitHub.AuthorizeUser("nobodys-code", "gho_nobody", e2e.InstallationID)
	for _, tc := range []struct {
		name, code string
		status     int
		error      string
		says       []string
	}{
		{"another GitHub account", w.GitHub.InstallCode("grace", e2e.InstallationID), http.StatusForbidden, "insufficient_scope",
			[]string{"GitHub account that installed the App (grace)", "kiln member who started the link (ada)"}},
		{"a token GitHub does not say whose", "nobodys-code", http.StatusBadRequest, "validation_failed", []string{"did not accept"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.callback(t, w, state, tc.code, acceptJSON)
			e2e.WantError(t, r, tc.status, tc.error)
			for _, want := range tc.says {
				if !strings.Contains(r.Raw, want) {
					t.Errorf("the refusal does not say %q: %s", want, r.Raw)
				}
			}
			if w.Linked(t, orgID, ada) {
				t.Fatal("another GitHub account linked the installation")
			}
		})
	}
	if r := b.callback(t, w, state, w.GitHub.InstallCode("ada", e2e.InstallationID), acceptJSON); r.Status != http.StatusOK || !w.Linked(t, orgID, ada) {
		t.Fatalf("Ada's own GitHub account: %d %s", r.Status, r.Raw)
	}
}

// TestGitHubInstallAnswersAPageLeadingToTheConsole: the browser GitHub sends back gets a page,
// not JSON: on failure the error's message, its status and a link back to the console to start
// again; on success that GitHub is linked to the organization (its name escaped) with a link to
// the console's organization page. The install cookie is HttpOnly, SameSite=Lax, sent to the
// callback only, for the state's lifetime, and the link that linked removes it.
func TestGitHubInstallAnswersAPageLeadingToTheConsole(t *testing.T) {
	t.Parallel()
	w := installWorld(t, e2e.Serve)
	const name = `Games <b>&</b> "Co"`
	if r := w.Do(t, "PATCH", "/organizations/"+w.OrgID, w.Token, map[string]any{"name": name}); r.Status != http.StatusOK {
		t.Fatalf("rename: %d %s", r.Status, r.Raw)
	}
	b := newBrowser(t)
	r := b.get(t, w, "/integrations/github/install", w.Token, acceptJSON)
	cookie := r.Header.Get("Set-Cookie")
	for _, want := range []string{"kiln_github_install=", "Path=/integrations/github/callback", "Max-Age=900", "HttpOnly", "SameSite=Lax"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("the install cookie %q lacks %s", cookie, want)
		}
	}
	if strings.Contains(cookie, "Secure") {
		t.Errorf("the install cookie %q is Secure on plain HTTP", cookie)
	}
	u, _ := url.Parse(e2e.Field(t, r.Body, "url"))
	state := u.Query().Get("state")
	callbackURL, _ := url.Parse(w.URL() + "/integrations/github/callback")
	w.GitHub.AuthorizeUser("code-1", "gho_installer", e2e.InstallationID)
	w.GitHub.AuthorizeUser("code-2", "gho_installer", e2e.InstallationID)

	page := func(t *testing.T, r e2e.Response, status int, says ...string) {
		t.Helper()
		if r.Status != status || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("got %d %s, want %d text/html:\n%s", r.Status, r.Header.Get("Content-Type"), status, r.Raw)
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
		for _, want := range append(says, `<html lang="en">`, `<a href="/console/organization">`) {
			if !strings.Contains(r.Raw, want) {
				t.Errorf("the page lacks %s:\n%s", want, r.Raw)
			}
		}
		for _, bad := range []string{"<script", "<b>", "style="} {
			if strings.Contains(r.Raw, bad) {
				t.Errorf("the page has %s:\n%s", bad, r.Raw)
			}
		}
	}
	page(t, newBrowser(t).callback(t, w, state, "code-1", acceptHTML), http.StatusForbidden,
		"<h1>GitHub was not linked</h1>", "another browser", "start again", "Request id: <code>req_")
	page(t, b.callback(t, w, "not-a-state", "code-1", ""), http.StatusBadRequest,
		"<code>state</code> is not a valid, unexpired install state")
	if w.Linked(t, w.OrgID, w.Token) {
		t.Fatal("a failed callback linked")
	}
	r = b.callback(t, w, state, "code-2", acceptHTML)
	page(t, r, http.StatusOK, "<h1>GitHub is linked</h1>", "GitHub is linked to Games &lt;b&gt;&amp;&lt;/b&gt; &#34;Co&#34;.",
		"Back to Games &lt;b&gt;&amp;&lt;/b&gt; &#34;Co&#34; in the kiln console")
	if !w.Linked(t, w.OrgID, w.Token) {
		t.Fatal("the page says linked, the organization is not")
	}
	if cleared := r.Header.Get("Set-Cookie"); !strings.Contains(cleared, "kiln_github_install=;") || !strings.Contains(cleared, "Max-Age=0") {
		t.Errorf("the linking answer does not remove the install cookie: %q", cleared)
	}
	if left := b.jar.Cookies(callbackURL); len(left) != 0 {
		t.Errorf("the browser still has %v", left)
	}
}
