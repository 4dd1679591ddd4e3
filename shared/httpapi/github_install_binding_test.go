package httpapi

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestInstallCookieFollowsThePublicURLAndTheScheme(t *testing.T) {
	for _, tc := range []struct {
		name, publicURL, target string
		header                  http.Header
		tls                     bool
		path                    string
		secure                  bool
	}{
		{"plain HTTP", "http://127.0.0.1:8080", "http://127.0.0.1:8080/integrations/github/install", nil, false, "/integrations/github/callback", false},
		{"no public URL", "", "http://kiln.local/integrations/github/install", nil, false, "/integrations/github/callback", false},
		{"an HTTPS public URL below a path", "https://example.com/kiln/", "http://10.0.0.2/integrations/github/install", nil, false, "/kiln/integrations/github/callback", true},
		{"a TLS connection", "http://127.0.0.1:8080", "https://127.0.0.1:8080/integrations/github/install", nil, true, "/integrations/github/callback", true},
		{"a proxy that terminated HTTPS", "", "http://10.0.0.2/integrations/github/install", http.Header{"X-Forwarded-Proto": {"https"}}, false, "/integrations/github/callback", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{publicURL: tc.publicURL}
			r := httptest.NewRequest(http.MethodGet, tc.target, nil)
			if tc.header != nil {
				r.Header = tc.header
			}
			if !tc.tls {
				r.TLS = nil
			} else if r.TLS == nil {
				r.TLS = &tls.ConnectionState{}
			}
			rec := httptest.NewRecorder()
			s.setInstallCookie(rec, r, "secret")
			cookies := rec.Result().Cookies()
			if len(cookies) != 1 {
				t.Fatalf("%d cookies, want 1", len(cookies))
			}
			c := cookies[0]
			if c.Name != installCookie || c.Value != "secret" || c.Path != tc.path || c.Secure != tc.secure || !c.HttpOnly ||
				c.SameSite != http.SameSiteLaxMode || c.MaxAge != int(installStateLifetime/time.Second) {
				t.Fatalf("cookie %+v, want path %s, secure %v, HttpOnly, Lax, for the state's lifetime", c, tc.path, tc.secure)
			}
		})
	}
}

func TestInstallBrowserMatchesItsOwnSecretOnly(t *testing.T) {
	secret, hash := newInstallBrowser()
	other, _ := newInstallBrowser()
	st := installState{Browser: hash}
	for _, tc := range []struct {
		name   string
		cookie *http.Cookie
		ok     bool
	}{
		{"its own secret", &http.Cookie{Name: installCookie, Value: secret}, true},
		{"no cookie", nil, false},
		{"another link's secret", &http.Cookie{Name: installCookie, Value: other}, false},
		{"the hash itself", &http.Cookie{Name: installCookie, Value: hash}, false},
		{"its secret under another name", &http.Cookie{Name: "other", Value: secret}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/integrations/github/callback", nil)
			if tc.cookie != nil {
				r.AddCookie(tc.cookie)
			}
			if err := checkInstallBrowser(r, st); (err == nil) != tc.ok {
				t.Fatalf("checkInstallBrowser = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestWantsJSON(t *testing.T) {
	for _, tc := range []struct {
		accept string
		json   bool
	}{
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", false},
		{"text/html, application/json", false},
		{"*/*", false},
		{"", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/integrations/github/callback", nil)
		r.Header.Set("Accept", tc.accept)
		if got := wantsJSON(r); got != tc.json {
			t.Errorf("Accept %q: wantsJSON = %v, want %v", tc.accept, got, tc.json)
		}
	}
}
