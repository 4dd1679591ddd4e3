package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/kilnbuild/kiln/shared/console"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// An install link works only for the person who asked for it. GET /integrations/github/install
// sets a cookie holding a random secret in the asking browser, and the signed state carries the
// secret's hash; the callback refuses a browser without that cookie. Where the admin signs in
// with GitHub, the GitHub account that installs must also be theirs.

// installCookie is the name of the install flow's browser cookie.
const installCookie = "kiln_github_install"

// installCallbackPath is where GitHub sends the installer back (the App's Setup URL); the
// install cookie is sent there only.
const installCallbackPath = "/integrations/github/callback"

// newInstallBrowser makes the secret of a browser's install cookie and the hash that the state
// carries.
func newInstallBrowser() (secret, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, browserHash(secret)
}

func browserHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// checkInstallBrowser refuses a callback from a browser that did not ask for the state's link.
func checkInstallBrowser(r *http.Request, st installState) error {
	c, err := r.Cookie(installCookie)
	if err == nil && subtle.ConstantTimeCompare([]byte(browserHash(c.Value)), []byte(st.Browser)) == 1 {
		return nil
	}
	return kiln.Errorf(kiln.EInsufficientScope, "this install link was started in another browser: an install link works only "+
		"in the browser of the kiln admin who asked for it (from the console's organization page, with its cookie); "+
		"nothing was linked. Start again from the console in the browser you install from")
}

// setInstallCookie gives the browser the secret of its install link: HttpOnly, sent only to the
// callback, for as long as the state lives, and SameSite=Lax so that GitHub's redirect back (a
// top-level navigation from another site) carries it.
func (s *Server) setInstallCookie(w http.ResponseWriter, r *http.Request, secret string) {
	http.SetCookie(w, &http.Cookie{Name: installCookie, Value: secret, Path: s.basePath() + installCallbackPath,
		MaxAge: int(installStateLifetime.Seconds()), HttpOnly: true, Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
}

// clearInstallCookie removes the install cookie once its link has linked.
func (s *Server) clearInstallCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: installCookie, Path: s.basePath() + installCallbackPath,
		MaxAge: -1, HttpOnly: true, Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
}

// isHTTPS reports whether the browser reaches the service over HTTPS: the connection, the URL
// the request was made with (the AWS API's), the proxy in front, or the public URL say so.
func (s *Server) isHTTPS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.URL.Scheme, "https") ||
		strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") || strings.HasPrefix(strings.ToLower(s.publicURL), "https://")
}

// basePath is the path of the public URL, without its final slash ("" for a service at the
// root of its host): what the browser's paths of the API start with.
func (s *Server) basePath() string {
	u, err := url.Parse(s.publicURL)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}

// consolePath is the browser's path of a console page.
func (s *Server) consolePath(page string) string { return s.basePath() + console.Prefix + page }

// checkInstaller refuses an install that the GitHub account of userToken completed when the
// admin who started it (userID) signs in with GitHub and is another account: their kiln user
// carries their GitHub user id. An admin without a GitHub identity (linked in by an API token)
// is bound by the browser alone.
func (s *Server) checkInstaller(ctx context.Context, userID, userToken string) error {
	admin, err := s.users.GetGitHubUser(ctx, userID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	installer, err := s.github.AccountOf(ctx, userToken)
	if err != nil {
		return err
	}
	if installer.ID != admin.GitHubID {
		return kiln.Errorf(kiln.EInsufficientScope, "the GitHub account that installed the App (%s) is not the one of the kiln member "+
			"who started the link (%s); nothing was linked. Sign in to GitHub as %s, then start again from the console",
			installer.Login, admin.Login, admin.Login)
	}
	return nil
}
