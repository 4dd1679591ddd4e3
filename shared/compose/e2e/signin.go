package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
)

// signUpWorld is a world whose service lets people sign in with GitHub and create their own
// organizations (KILN_SIGNUP=github), with the fake GitHub's OAuth client and three GitHub people:
// ada and grace, and eve, whose only verified email is her own.
func SignUpWorld(t *testing.T, d Deployment) *World {
	t.Helper()
	const clientID, clientSecret = "Iv1.signup", "signup-client-secret"
	w := NewWorld(t, d, func(c *serve.Config) {
		c.SignUp = true
		c.GitHubClientID, c.GitHubClientSecret = clientID, clientSecret
	})
	gh := w.GitHub
	gh.ClientID, gh.ClientSecret = clientID, clientSecret
	for _, u := range []githubtest.User{
		{Login: "ada", Name: "Ada Lovelace", Emails: []githubtest.Email{{Address: "old@ada.example", Verified: true}, {Address: "ada@studio.example", Primary: true, Verified: true}}},
		{Login: "grace", Name: "Grace Hopper", Emails: []githubtest.Email{{Address: "grace@studio.example", Primary: true, Verified: true}}},
		{Login: "eve", Name: "Eve", Emails: []githubtest.Email{{Address: "eve@elsewhere.example", Primary: true, Verified: true}, {Address: "grace@studio.example", Verified: false}}},
	} {
		gh.AddUser(u)
	}
	return w
}

// signIn goes through GitHub sign-in as the console does: the API's redirect to GitHub's
// authorization page, the person's choice there, GitHub's redirect back with code and state, and
// the code traded for a session. It returns the session's secret.
func SignIn(t *testing.T, w *World, login string) string {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	state := "state-" + login + "-0123456789abcdef"
	resp, err := noFollow.Get(w.URL() + "/auth/github/signin?state=" + state)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	to, _ := url.Parse(resp.Header.Get("Location"))
	callback := w.URL() + "/console/signin/github"
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(to.String(), w.GitHub.WebURL()+"login/oauth/authorize") ||
		to.Query().Get("client_id") != w.GitHub.ClientID || to.Query().Get("state") != state || to.Query().Get("redirect_uri") != callback {
		t.Fatalf("sign-in redirect: %d to %q", resp.StatusCode, to)
	}
	form := url.Values{"login": {login}, "client_id": {w.GitHub.ClientID}, "redirect_uri": {callback}, "state": {state}}
	resp, err = noFollow.PostForm(w.GitHub.WebURL()+"login/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(back.String(), callback+"?") || back.Query().Get("state") != state {
		t.Fatalf("GitHub's redirect back: %d to %q", resp.StatusCode, back)
	}
	r := w.Do(t, "POST", "/auth/github/session", "", map[string]any{"code": back.Query().Get("code")})
	if r.Status != http.StatusCreated || !auth.WellFormedSession(Field(t, r.Body, "token")) {
		t.Fatalf("sign in as %s: %d %s", login, r.Status, r.Raw)
	}
	return Field(t, r.Body, "token")
}
