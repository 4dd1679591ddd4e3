package githubtest

import (
	"cmp"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

var installPage = template.Must(template.New("install").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Install {{.Slug}} · fake GitHub</title>
</head>
<body>
<main>
<h1>Install {{.Slug}}</h1>
<p>Where do you want to install {{.Slug}}? The App can then read the repositories of that account.</p>
{{- range .Accounts}}
<form method="post" action="{{$.Action}}">
<input type="hidden" name="state" value="{{$.State}}">
<input type="hidden" name="installation_id" value="{{.ID}}">
{{- if $.Logins}}
<label>Signed in to GitHub as <select name="login">
{{- range $.Logins}}
<option>{{.}}</option>
{{- end}}
</select></label>
{{- end}}
<button type="submit">Install on {{.Account}}</button>
</form>
{{- else}}
<p>This fake GitHub has no accounts to install the App on.</p>
{{- end}}
</main>
</body>
</html>
`))

// installTarget is one account the install page offers.
type installTarget struct {
	ID      int64
	Account string
}

// installApp checks the {slug} of an install page request and that the App has a Setup URL to
// send the installer back to; on failure it has answered with an HTML error page.
func (s *Server) installApp(w http.ResponseWriter, r *http.Request) (*url.URL, bool) {
	if r.PathValue("slug") != s.AppSlug {
		errorPage(w, http.StatusNotFound, "Not Found")
		return nil, false
	}
	setup, ok := CallbackURL(s.SetupURL)
	if !ok {
		errorPage(w, http.StatusNotFound, "This GitHub App has no Setup URL configured: installing it would lead nowhere.")
		return nil, false
	}
	return setup, true
}

// installPage is the App's public page "Install <slug>": one button per installation of the fake,
// each carrying the state the caller passed and, where the fake has accounts (AddUser), a choice
// of the GitHub account that installs (real GitHub takes the one signed in).
func (s *Server) installPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.installApp(w, r); !ok {
		return
	}
	s.mu.Lock()
	var targets []installTarget
	for _, in := range s.insts {
		targets = append(targets, installTarget{ID: in.id, Account: in.account})
	}
	logins := s.loginsLocked()
	s.mu.Unlock()
	slices.SortFunc(targets, func(a, b installTarget) int { return cmp.Compare(a.ID, b.ID) })
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// No scripts or styles; form-action stays open (it does not fall back to default-src), as the
	// form's answer redirects to the App's Setup URL.
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	_ = installPage.Execute(w, struct {
		Slug, Action, State string
		Accounts            []installTarget
		Logins              []string
	}{s.AppSlug, "/apps/" + s.AppSlug + "/installations/new", r.URL.Query().Get("state"), targets, logins})
}

// install is the install page's form: like GitHub after an install, it sends the browser to the
// Setup URL with the installation, setup_action=install, the state it was given, and a fresh
// single-use OAuth code whose user token lists that installation in GET /user/installations and,
// when the form names an account (login), is that account's in GET /user.
func (s *Server) install(w http.ResponseWriter, r *http.Request) {
	setup, ok := s.installApp(w, r)
	if !ok {
		return
	}
	if err := r.ParseForm(); err != nil {
		errorPage(w, http.StatusBadRequest, "Problems parsing the form")
		return
	}
	id, err := strconv.ParseInt(r.PostForm.Get("installation_id"), 10, 64)
	s.mu.Lock()
	in := s.insts[id]
	var code string
	if err == nil && in != nil {
		code, _ = s.installCodeLocked(r.PostForm.Get("login"), id)
	}
	s.mu.Unlock()
	if code == "" {
		errorPage(w, http.StatusNotFound, "Not Found")
		return
	}
	q := setup.Query()
	if state := r.PostForm.Get("state"); state != "" {
		q.Set("state", state)
	}
	q.Set("code", code)
	q.Set("installation_id", strconv.FormatInt(id, 10))
	q.Set("setup_action", "install")
	setup.RawQuery = q.Encode()
	http.Redirect(w, r, setup.String(), http.StatusFound)
}
