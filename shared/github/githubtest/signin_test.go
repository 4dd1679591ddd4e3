package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

var octo = User{Login: "octo-dev", Name: "Octo Dev", Emails: []Email{
	{Address: "old@example.com", Verified: true},
	{Address: "octo@example.com", Primary: true, Verified: true},
}}

// postForm posts a form to a path of the web side without following a redirect, and answers
// the response (its body closed: status and headers remain).
func postForm(t *testing.T, s *Server, path string, form url.Values) *http.Response {
	t.Helper()
	c := *s.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(s.WebURL()+path, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestAuthorizePage(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddUser(octo)
	s.AddUser(User{Login: "ada"})
	q := url.Values{"client_id": {s.ClientID}, "redirect_uri": {"http://127.0.0.1:1/auth/github/callback"},
		"state": {`st"ate<1>`}}
	for _, tc := range []struct {
		name   string
		change func(url.Values)
		status int
	}{
		{"the App's client", func(url.Values) {}, http.StatusOK},
		{"no client_id", func(v url.Values) { v.Del("client_id") }, http.StatusNotFound},
		{"another client_id", func(v url.Values) { v.Set("client_id", "Iv1.other") }, http.StatusNotFound},
		{"no redirect_uri", func(v url.Values) { v.Del("redirect_uri") }, http.StatusBadRequest},
		{"relative redirect_uri", func(v url.Values) { v.Set("redirect_uri", "/callback") }, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := url.Values{}
			for k := range q {
				v.Set(k, q.Get(k))
			}
			tc.change(v)
			resp, err := s.Client().Get(s.WebURL() + "login/oauth/authorize?" + v.Encode())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status != http.StatusOK {
				return
			}
			page := string(body)
			for _, want := range []string{`<html lang="en">`, "<title>", "<main>", "<h1>Authorize kiln</h1>",
				`<form method="post"`, ">Continue as octo-dev</button>", ">Continue as ada</button>",
				`name="login" value="octo-dev"`, `name="client_id" value="` + s.ClientID + `"`,
				`name="redirect_uri" value="http://127.0.0.1:1/auth/github/callback"`,
				`name="state" value="st&#34;ate&lt;1&gt;"`} {
				if !strings.Contains(page, want) {
					t.Errorf("the page lacks %s:\n%s", want, page)
				}
			}
			if n := strings.Count(page, "<form "); n != 2 {
				t.Errorf("%d forms, want one per user (2)", n)
			}
			if strings.Contains(page, "<script") {
				t.Error("the page has a script")
			}
		})
	}
}

func TestAuthorizeRedirectsWithASingleUseCode(t *testing.T) {
	t.Parallel()
	s := New(t)
	id := s.AddUser(octo)
	form := url.Values{"client_id": {s.ClientID}, "redirect_uri": {"http://127.0.0.1:1/callback?from=console"},
		"state": {"signed.state"}, "login": {"octo-dev"}}
	resp := postForm(t, s, "login/oauth/authorize", form)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status %d, want 302", resp.StatusCode)
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Host != "127.0.0.1:1" || back.Path != "/callback" {
		t.Fatalf("redirected to %q (%v)", resp.Header.Get("Location"), err)
	}
	q := back.Query()
	code := q.Get("code")
	if q.Get("state") != "signed.state" || q.Get("from") != "console" || code == "" {
		t.Fatalf("redirect query %v: want state, code and the callback's own query", q)
	}

	tok := exchange(t, s, code)
	if !strings.HasPrefix(tok["access_token"], "ghu_") {
		t.Fatalf("exchange: %v, want a ghu_ token", tok)
	}
	if again := exchange(t, s, code); again["error"] != "bad_verification_code" {
		t.Fatalf("second exchange: %v, want bad_verification_code", again)
	}
	var user struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
	}
	if status := getJSON(t, s, "user", tok["access_token"], &user); status != http.StatusOK || user.ID != id || user.Login != "octo-dev" {
		t.Fatalf("GET /user: %d %+v, want user %d", status, user, id)
	}

	for _, tc := range []struct {
		name   string
		change func(url.Values)
	}{
		{"unknown login", func(v url.Values) { v.Set("login", "nobody") }},
		{"another client", func(v url.Values) { v.Set("client_id", "Iv1.other") }},
	} {
		v := url.Values{}
		for k := range form {
			v.Set(k, form.Get(k))
		}
		tc.change(v)
		resp := postForm(t, s, "login/oauth/authorize", v)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", tc.name, resp.StatusCode)
		}
	}
}

func TestSignInCodeExpires(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddUser(octo)
	now := time.Now()
	s.SetNow(func() time.Time { return now })
	code := s.SignInCode("octo-dev")
	later := now.Add(codeLifetime)
	s.SetNow(func() time.Time { return later })
	if got := exchange(t, s, code); got["error"] != "bad_verification_code" {
		t.Fatalf("exchange after %s: %v, want bad_verification_code", codeLifetime, got)
	}
}

func TestUserEndpointsAnswerForTheUserToken(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddUser(User{Login: "ada", Name: "Ada Lovelace", Emails: []Email{{Address: "ada@example.com", Primary: true, Verified: true}}})
	id := s.AddUser(octo)
	tok := exchange(t, s, s.SignInCode("octo-dev"))["access_token"]

	var user struct {
		ID    int64   `json:"id"`
		Login string  `json:"login"`
		Name  *string `json:"name"`
		Type  string  `json:"type"`
	}
	if status := getJSON(t, s, "user", tok, &user); status != http.StatusOK || user.ID != id ||
		user.Login != "octo-dev" || user.Name == nil || *user.Name != "Octo Dev" || user.Type != "User" {
		t.Fatalf("GET /user: %d %+v", status, user)
	}
	var emails []struct {
		Email    string `json:"email"`
		Primary  bool   `json:"primary"`
		Verified bool   `json:"verified"`
	}
	if status := getJSON(t, s, "user/emails", tok, &emails); status != http.StatusOK || len(emails) != 2 ||
		emails[0].Email != "old@example.com" || emails[0].Primary ||
		emails[1].Email != "octo@example.com" || !emails[1].Primary || !emails[1].Verified {
		t.Fatalf("GET /user/emails: %d %+v", status, emails)
	}

	s.AuthorizeUser("install-code", "ghu_installer", 1)
	installer := exchange(t, s, "install-code")["access_token"]
	for _, bad := range []string{"", "ghu_unknown", s.IssueToken(1), installer} {
		for _, path := range []string{"user", "user/emails"} {
			if status := getJSON(t, s, path, bad, nil); status != http.StatusUnauthorized {
				t.Errorf("GET /%s with %q: %d, want 401", path, bad, status)
			}
		}
	}
}

// exchange trades an OAuth code at the token endpoint as the App's client and returns GitHub's
// JSON answer.
func exchange(t *testing.T, s *Server, code string) map[string]string {
	t.Helper()
	form := url.Values{"client_id": {s.ClientID}, "client_secret": {s.ClientSecret}, "code": {code}}
	req, _ := http.NewRequest(http.MethodPost, s.WebURL()+"login/oauth/access_token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]string{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// getJSON GETs an API path with a bearer token (none when "") into v (when not nil) and returns
// the status.
func getJSON(t *testing.T, s *Server, path, token string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL()+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}
