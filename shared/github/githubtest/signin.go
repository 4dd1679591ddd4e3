package githubtest

import (
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// User is a GitHub account that can sign in to kiln through the fake's OAuth web flow.
type User struct {
	// ID is GitHub's user id; 0 picks a fresh one.
	ID     int64
	Login  string
	Name   string
	Emails []Email
}

// Email is one of a User's email addresses, as GET /user/emails lists them.
type Email struct {
	Address           string
	Primary, Verified bool
}

// codeLifetime is how long GitHub accepts an OAuth code from the web flow.
const codeLifetime = 10 * time.Minute

// AddUser adds (or, for a login already added, replaces) a GitHub account that the authorize page
// offers and GET /user and GET /user/emails describe. It returns the user's id.
func (s *Server) AddUser(u User) int64 {
	if u.Login == "" {
		s.fatalf("AddUser: a user needs a login")
	}
	u.Emails = slices.Clone(u.Emails)
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(u.Login)
	if old, ok := s.accounts[key]; ok && u.ID == 0 {
		u.ID = old.ID
	}
	if u.ID == 0 {
		u.ID = s.newID()
	}
	if _, ok := s.accounts[key]; !ok {
		s.logins = append(s.logins, key)
	}
	s.accounts[key] = &u
	return u.ID
}

// SignInCode issues a single-use OAuth code for login exactly as choosing that account on the
// authorize page does, for tests that skip the browser. Exchanging it gives a user access token
// (ghu_...) that GET /user answers for.
func (s *Server) SignInCode(login string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	code, ok := s.signInCodeLocked(login)
	if !ok {
		s.fatalf("SignInCode: no user %q (AddUser first)", login)
	}
	return code
}

func (s *Server) signInCodeLocked(login string) (string, bool) {
	u := s.accounts[strings.ToLower(login)]
	if u == nil {
		return "", false
	}
	return s.issueCodeLocked(userGrant{userID: u.ID}), true
}

// issueCodeLocked makes a single-use web flow code, valid for codeLifetime, whose exchange gives
// a fresh user access token (ghu_...) with g's user and installations; the caller holds s.mu.
func (s *Server) issueCodeLocked(g userGrant) string {
	code := randomHex(10)
	g.token, g.expires = "ghu_"+randomHex(18), s.now().Add(codeLifetime)
	s.codes[code] = g
	return code
}

// loginsLocked lists the accounts' logins in the order they were added; the caller holds s.mu.
func (s *Server) loginsLocked() []string {
	var logins []string
	for _, key := range s.logins {
		logins = append(logins, s.accounts[key].Login)
	}
	return logins
}

// CallbackURL parses a URL GitHub may send a browser back to: absolute http(s), no fragment.
func CallbackURL(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
		return nil, false
	}
	return u, true
}

var authorizePage = template.Must(template.New("authorize").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize kiln · fake GitHub</title>
</head>
<body>
<main>
<h1>Authorize kiln</h1>
<p>kiln wants to know who you are on GitHub: your login, name and verified primary email address.</p>
{{- range .Logins}}
<form method="post" action="{{$.Action}}">
<input type="hidden" name="client_id" value="{{$.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{$.RedirectURI}}">
<input type="hidden" name="state" value="{{$.State}}">
<input type="hidden" name="login" value="{{.}}">
<button type="submit">Continue as {{.}}</button>
</form>
{{- else}}
<p>This fake GitHub has no accounts to sign in with.</p>
{{- end}}
</main>
</body>
</html>
`))

// authorizeRequest is the query of GET /login/oauth/authorize or the form of its POST, checked.
type authorizeRequest struct {
	ClientID, RedirectURI, State string
	redirect                     *url.URL
}

// parseAuthorize checks client_id and redirect_uri as GitHub does; on failure it has answered
// with an HTML error page (404 for an unknown client, like GitHub).
func (s *Server) parseAuthorize(w http.ResponseWriter, v url.Values) (*authorizeRequest, bool) {
	req := &authorizeRequest{ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"), State: v.Get("state")}
	if req.ClientID == "" || req.ClientID != s.ClientID {
		errorPage(w, http.StatusNotFound, "Not Found")
		return nil, false
	}
	u, ok := CallbackURL(req.RedirectURI)
	if !ok {
		errorPage(w, http.StatusBadRequest, "The redirect_uri is not associated with this application.")
		return nil, false
	}
	req.redirect = u
	return req, true
}

// authorizePage is GitHub's "Authorize application" page: one button per account.
func (s *Server) authorizePage(w http.ResponseWriter, r *http.Request) {
	req, ok := s.parseAuthorize(w, r.URL.Query())
	if !ok {
		return
	}
	s.mu.Lock()
	logins := s.loginsLocked()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// No scripts or styles; form-action is left open (it does not fall back to default-src) as the
	// form's answer redirects to the caller's redirect_uri.
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	_ = authorizePage.Execute(w, struct {
		*authorizeRequest
		Action string
		Logins []string
	}{req, "/login/oauth/authorize", logins})
}

// authorize is the page's form: it sends the browser back to redirect_uri with a fresh code and
// the state it was given.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		errorPage(w, http.StatusBadRequest, "Problems parsing the form")
		return
	}
	req, ok := s.parseAuthorize(w, r.PostForm)
	if !ok {
		return
	}
	s.mu.Lock()
	code, ok := s.signInCodeLocked(r.PostForm.Get("login"))
	s.mu.Unlock()
	if !ok {
		errorPage(w, http.StatusNotFound, "Not Found")
		return
	}
	back := *req.redirect
	q := back.Query()
	q.Set("code", code)
	q.Set("state", req.State)
	back.RawQuery = q.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func errorPage(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = errorTemplate.Execute(w, message)
}

var errorTemplate = template.Must(template.New("error").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{{.}} · fake GitHub</title></head>
<body><main><h1>{{.}}</h1></main></body>
</html>
`))

// signedInUser returns the account of the request's user access token; on failure it has
// answered 401 like GitHub.
func (s *Server) signedInUser(w http.ResponseWriter, r *http.Request) (User, bool) {
	tok, _ := bearer(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if grant, ok := s.users[tok]; ok && grant.userID != 0 {
		for _, u := range s.accounts {
			if u.ID == grant.userID {
				return *u, true
			}
		}
	}
	writeError(w, http.StatusUnauthorized, "Bad credentials")
	return User{}, false
}

func (s *Server) getUser(w http.ResponseWriter, r *http.Request) {
	u, ok := s.signedInUser(w, r)
	if !ok {
		return
	}
	body := &github.User{
		Login:   github.String(u.Login),
		ID:      github.Int64(u.ID),
		Type:    github.String("User"),
		HTMLURL: github.String(s.WebURL() + u.Login),
		URL:     github.String(s.URL() + "users/" + u.Login),
	}
	if u.Name != "" {
		body.Name = github.String(u.Name)
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) listUserEmails(w http.ResponseWriter, r *http.Request) {
	u, ok := s.signedInUser(w, r)
	if !ok {
		return
	}
	list := []*github.UserEmail{}
	for _, e := range u.Emails {
		ue := &github.UserEmail{Email: github.String(e.Address), Primary: github.Bool(e.Primary),
			Verified: github.Bool(e.Verified)}
		if e.Primary {
			ue.Visibility = github.String("private")
		}
		list = append(list, ue)
	}
	lo, hi := page(w, r, len(list))
	writeJSON(w, http.StatusOK, list[lo:hi])
}
