package githubtest

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

const setupURL = "http://127.0.0.1:1/integrations/github/callback?from=app"

// installPageURL is the App's install page with a state, as kiln's GET /integrations/github/install
// makes it.
func installPageURL(s *Server, state string) string {
	return s.WebURL() + "apps/" + s.AppSlug + "/installations/new?" + url.Values{"state": {state}}.Encode()
}

func TestInstallPageListsTheInstallations(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.SetupURL = setupURL
	s.AddInstallation(7, "studio")
	s.AddInstallation(3, "demo")
	resp, err := s.Client().Get(installPageURL(s, `st"ate<1>`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); csp != "default-src 'none'" {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	page := string(body)
	for _, want := range []string{`<html lang="en">`, "<title>", "<main>", "<h1>Install kiln-test</h1>",
		`<form method="post" action="/apps/kiln-test/installations/new"`,
		">Install on demo</button>", ">Install on studio</button>",
		`name="installation_id" value="3"`, `name="installation_id" value="7"`,
		`name="state" value="st&#34;ate&lt;1&gt;"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	if n := strings.Count(page, "<form "); n != 2 {
		t.Errorf("%d forms, want one per installation (2)", n)
	}
	if strings.Index(page, "Install on demo") > strings.Index(page, "Install on studio") {
		t.Error("installations are not in id order")
	}
	if strings.Contains(page, "<script") {
		t.Error("the page has a script")
	}

	resp, err = s.Client().Get(s.WebURL() + "apps/another-app/installations/new?state=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("another App's install page: status %d, want 404", resp.StatusCode)
	}
}

func TestInstallRedirectsToTheSetupURLWithASingleUseCode(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.SetupURL = setupURL
	s.AddInstallation(1, "demo")
	s.AddInstallation(2, "elsewhere")
	form := url.Values{"state": {"signed.state"}, "installation_id": {"2"}}
	resp := postForm(t, s, "apps/kiln-test/installations/new", form)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status %d, want 302", resp.StatusCode)
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Scheme != "http" || back.Host != "127.0.0.1:1" || back.Path != "/integrations/github/callback" {
		t.Fatalf("redirected to %q (%v), want the Setup URL", resp.Header.Get("Location"), err)
	}
	q := back.Query()
	code := q.Get("code")
	if q.Get("state") != "signed.state" || q.Get("installation_id") != "2" || q.Get("setup_action") != "install" ||
		code == "" || q.Get("from") != "app" {
		t.Fatalf("redirect query %v: want state, code, installation_id, setup_action and the Setup URL's own query", q)
	}

	tok := exchange(t, s, code)
	if !strings.HasPrefix(tok["access_token"], "ghu_") {
		t.Fatalf("exchange: %v, want a ghu_ token", tok)
	}
	if again := exchange(t, s, code); again["error"] != "bad_verification_code" {
		t.Fatalf("second exchange: %v, want bad_verification_code", again)
	}
	var list struct {
		Installations []struct {
			ID int64 `json:"id"`
		} `json:"installations"`
	}
	if status := getJSON(t, s, "user/installations", tok["access_token"], &list); status != http.StatusOK ||
		len(list.Installations) != 1 || list.Installations[0].ID != 2 {
		t.Fatalf("GET /user/installations: %d %+v, want installation 2 only", status, list)
	}

	for _, tc := range []struct {
		name, path, installation string
	}{
		{"unknown installation", "apps/kiln-test/installations/new", "9"},
		{"no installation", "apps/kiln-test/installations/new", ""},
		{"not a number", "apps/kiln-test/installations/new", "two"},
		{"another App", "apps/another-app/installations/new", "2"},
	} {
		resp := postForm(t, s, tc.path, url.Values{"state": {"s"}, "installation_id": {tc.installation}})
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", tc.name, resp.StatusCode)
		}
	}
}

func TestInstallWithoutASetupURLIsRefused(t *testing.T) {
	t.Parallel()
	for _, setup := range []string{"", "/relative/callback", "ftp://127.0.0.1/callback"} {
		s := New(t)
		s.SetupURL = setup
		s.AddInstallation(1, "demo")
		resp, err := s.Client().Get(installPageURL(s, "x"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "no Setup URL") {
			t.Errorf("SetupURL %q: the page answered %d, want 404 saying there is no Setup URL:\n%s", setup, resp.StatusCode, body)
		}
		resp = postForm(t, s, "apps/kiln-test/installations/new", url.Values{"state": {"x"}, "installation_id": {"1"}})
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Location") != "" {
			t.Errorf("SetupURL %q: the form answered %d (Location %q), want 404", setup, resp.StatusCode, resp.Header.Get("Location"))
		}
		s.mu.Lock()
		codes := len(s.codes)
		s.mu.Unlock()
		if codes != 0 {
			t.Errorf("SetupURL %q: %d codes issued, want none", setup, codes)
		}
	}
}

// TestInstallAsAnAccount: with accounts (AddUser), the install page asks which one installs, and
// the code of an install by one (from the form or InstallCode) gives a token GET /user answers as
// that account; an install by no account gives a token GET /user refuses, as before.
func TestInstallAsAnAccount(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.SetupURL = setupURL
	s.AddInstallation(1, "demo")
	octoID := s.AddUser(octo)
	s.AddUser(User{Login: "grace"})
	resp, err := s.Client().Get(installPageURL(s, "x"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`<select name="login">`, "<option>octo-dev</option>", "<option>grace</option>"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the page lacks %s:\n%s", want, body)
		}
	}
	formCode := func(login string) string {
		form := url.Values{"state": {"s"}, "installation_id": {"1"}}
		if login != "" {
			form.Set("login", login)
		}
		resp := postForm(t, s, "apps/kiln-test/installations/new", form)
		back, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || back.Query().Get("code") == "" {
			t.Fatalf("install as %q: %d to %q", login, resp.StatusCode, resp.Header.Get("Location"))
		}
		return back.Query().Get("code")
	}
	for _, tc := range []struct {
		name, code string
		status     int
		id         int64
	}{
		{"the form, as octo-dev", formCode("octo-dev"), http.StatusOK, octoID},
		{"InstallCode, as octo-dev", s.InstallCode("octo-dev", 1), http.StatusOK, octoID},
		{"the form, as no account", formCode(""), http.StatusUnauthorized, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := exchange(t, s, tc.code)["access_token"]
			var u struct {
				ID int64 `json:"id"`
			}
			if status := getJSON(t, s, "user", tok, &u); status != tc.status || u.ID != tc.id {
				t.Fatalf("GET /user: %d %+v, want %d with id %d", status, u, tc.status, tc.id)
			}
		})
	}
	if resp := postForm(t, s, "apps/kiln-test/installations/new", url.Values{"state": {"s"}, "installation_id": {"1"}, "login": {"nobody"}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("install as an unknown account: %d, want 404", resp.StatusCode)
	}
}
