//go:build unix

package scripts

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDemoSignUp runs the demo with KILN_DEMO_SIGNUP=1 and goes through what its printed steps
// ask of a browser, over HTTP: sign in with GitHub as octo-dev on the fake's authorize page,
// create an organization, link GitHub through the fake's install page, and add demo/shooter.
func TestDemoSignUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kiln and runs the demo")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the processes the demo started")
	}
	d := startDemo(t, "KILN_DEMO_SIGNUP=1")
	b := newBrowser(t)
	kiln, gh := "http://127.0.0.1:"+d.port, "http://127.0.0.1:"+d.ghPort
	for _, want := range []string{"The owner's API token: kiln_", "Open " + kiln + "/console/", `"Sign in with GitHub"`,
		"octo-dev", "create an organization", `"Link GitHub"`, `"Install on demo"`, "demo/shooter",
		"invite ada@example.com", "continue as ada, and join"} {
		if !strings.Contains(strings.Join(strings.Fields(d.out), " "), want) {
			t.Errorf("the demo did not print %q:\n%s", want, d.out)
		}
	}
	// Linking an installation by id is refused with the OAuth client set: no curl steps.
	for _, bad := range []string{"# --- demo steps ---", "curl", `"installationId":"1"`} {
		if strings.Contains(d.out, bad) {
			t.Errorf("the demo printed %q:\n%s", bad, d.out)
		}
	}

	var methods struct{ GitHub, Token bool }
	b.call(t, http.MethodGet, kiln+"/auth/methods", "", "", http.StatusOK, &methods)
	if !methods.GitHub || !methods.Token {
		t.Fatalf("GET /auth/methods: %+v, want github and token", methods)
	}

	// "Sign in with GitHub" as octo-dev.
	session := signInWithGitHub(t, b, kiln, gh, "octo-dev")

	// Create an organization, then "Link GitHub" through the fake's install page.
	var org struct{ ID string }
	b.call(t, http.MethodPost, kiln+"/organizations", session, `{"name":"Octo Games"}`, http.StatusCreated, &org)
	var install struct{ URL string }
	b.call(t, http.MethodGet, kiln+"/integrations/github/install", session, "", http.StatusOK, &install)
	installURL, err := url.Parse(install.URL)
	if err != nil || !strings.HasPrefix(install.URL, gh+"/apps/") {
		t.Fatalf("install link %q (%v), want the fake GitHub's install page", install.URL, err)
	}
	if page := b.call(t, http.MethodGet, install.URL, "", "", http.StatusOK, nil); !strings.Contains(page, ">Install on demo</button>") ||
		!strings.Contains(page, "<option>octo-dev</option>") {
		t.Fatalf("the install page offers no installation on demo as octo-dev:\n%s", page)
	}
	form := url.Values{"state": {installURL.Query().Get("state")}, "installation_id": {"1"}, "login": {"octo-dev"}}
	setup := location(t, b.call(t, http.MethodPost, gh+installURL.Path, "", form.Encode(), http.StatusFound, nil))
	if !strings.HasPrefix(setup.String(), kiln+"/integrations/github/callback?") {
		t.Fatalf("the install page sent the installer to %s, want kiln's install callback", setup)
	}
	// The callback answers the browser with a page leading back to the console.
	if page := b.call(t, http.MethodGet, setup.String(), "", "", http.StatusOK, nil); !strings.Contains(page, "GitHub is linked to Octo Games.") ||
		!strings.Contains(page, `href="/console/organization"`) {
		t.Fatalf("the callback answered:\n%s", page)
	}
	var linked struct {
		IntegrationSettings struct {
			GitHub struct{ InstallationID string }
		}
	}
	b.call(t, http.MethodGet, kiln+"/organizations/"+org.ID, session, "", http.StatusOK, &linked)
	if linked.IntegrationSettings.GitHub.InstallationID != "1" {
		t.Fatalf("the organization has %+v linked, want installation 1", linked)
	}

	// Add demo/shooter.
	var project struct{ ID, Name string }
	b.call(t, http.MethodPost, kiln+"/projects/add-repo", session,
		`{"name":"Shooter","installationId":"1","repoFullName":"demo/shooter"}`, http.StatusCreated, &project)
	if project.ID == "" || project.Name != "Shooter" {
		t.Fatalf("POST /projects/add-repo: %+v", project)
	}

	// Invite the fake's second account, ada, and join as ada from another browser (the private
	// window of the printed steps), signed in with GitHub.
	var inv struct{ Link string }
	b.call(t, http.MethodPost, kiln+"/organizations/"+org.ID+"/invitations", session,
		`{"email":"ada@example.com","role":"member"}`, http.StatusCreated, &inv)
	_, secret, ok := strings.Cut(inv.Link, "#")
	if !ok || !strings.Contains(inv.Link, "/console/invitations/accept#") {
		t.Fatalf("invitation link %q", inv.Link)
	}
	ada := newBrowser(t)
	adaSession := signInWithGitHub(t, ada, kiln, gh, "ada")
	var joined struct {
		User         struct{ Email string }
		Organization struct{ ID string }
		Membership   struct{ Role string }
	}
	ada.call(t, http.MethodPost, kiln+"/invitations/accept", adaSession, `{"secret":"`+secret+`"}`, http.StatusCreated, &joined)
	if joined.User.Email != "ada@example.com" || joined.Organization.ID != org.ID || joined.Membership.Role != "member" {
		t.Fatalf("POST /invitations/accept as ada: %+v, want ada@example.com a member of %s", joined, org.ID)
	}
	var members struct {
		Items []struct{ Email, Role string }
	}
	b.call(t, http.MethodGet, kiln+"/organizations/"+org.ID+"/members", session, "", http.StatusOK, &members)
	if len(members.Items) != 2 {
		t.Errorf("the organization's members: %+v, want octo-dev and ada", members.Items)
	}
	d.interrupt(t)
}

// signInWithGitHub is "Sign in with GitHub" in browser b as the fake's account login: kiln sends
// the browser to the fake's authorize page, which offers the account; its code back at the
// console makes a session. It answers the session's token.
func signInWithGitHub(t *testing.T, b *browser, kiln, gh, login string) string {
	t.Helper()
	state := "demoSignUpState-24chars_"
	to := location(t, b.call(t, http.MethodGet, kiln+"/auth/github/signin?state="+state, "", "", http.StatusFound, nil))
	if !strings.HasPrefix(to.String(), gh+"/login/oauth/authorize?") || to.Query().Get("state") != state ||
		to.Query().Get("redirect_uri") != kiln+"/console/signin/github" {
		t.Fatalf("sign-in redirected to %s, want the fake GitHub's authorize page back to the console", to)
	}
	if page := b.call(t, http.MethodGet, to.String(), "", "", http.StatusOK, nil); !strings.Contains(page, ">Continue as "+login+"</button>") {
		t.Fatalf("the authorize page offers no %s:\n%s", login, page)
	}
	form := url.Values{"client_id": {to.Query().Get("client_id")}, "redirect_uri": {to.Query().Get("redirect_uri")},
		"state": {state}, "login": {login}}
	back := location(t, b.call(t, http.MethodPost, gh+"/login/oauth/authorize", "", form.Encode(), http.StatusFound, nil))
	var session struct{ Token string }
	b.call(t, http.MethodPost, kiln+"/auth/github/session", "", `{"code":"`+back.Query().Get("code")+`"}`, http.StatusCreated, &session)
	if !strings.HasPrefix(session.Token, "ksess_") {
		t.Fatalf("POST /auth/github/session as %s: token %q, want a session", login, session.Token)
	}
	return session.Token
}

// browser is the one browser the demo's steps use: it keeps the cookies kiln sets (the install
// link's, which GitHub's redirect back must carry).
type browser struct{ jar http.CookieJar }

func newBrowser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{jar: jar}
}

// call makes a request from the browser (a JSON body, or a form body when it does not start
// with "{"), with a bearer token unless "", without following redirects; it fails the test
// unless the answer has status want, decodes a JSON answer into v when not nil, and returns the
// body, or the Location of a redirect.
func (b *browser) call(t *testing.T, method, to, token, body string, want int, v any) string {
	t.Helper()
	req, err := http.NewRequest(method, to, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasPrefix(body, "{"):
		req.Header.Set("Content-Type", "application/json")
	case body != "":
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Jar: b.jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, to, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, to, resp.StatusCode, want, got)
	}
	if v != nil {
		if err := json.Unmarshal(got, v); err != nil {
			t.Fatalf("%s %s: %v: %s", method, to, err, got)
		}
	}
	if resp.StatusCode == http.StatusFound {
		return resp.Header.Get("Location")
	}
	return string(got)
}

// location parses a redirect's Location as call returned it.
func location(t *testing.T, loc string) *url.URL {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil || !u.IsAbs() {
		t.Fatalf("redirect to %q (%v), want an absolute URL", loc, err)
	}
	return u
}
