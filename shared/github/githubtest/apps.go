package githubtest

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// AuthorizeUser prepares the OAuth step of the install flow: exchanging code (once) gives
// userToken, whose GET /user/installations lists installationIDs.
func (s *Server) AuthorizeUser(code, userToken string, installationIDs ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = userGrant{token: userToken, ids: installationIDs}
}

// InstallCode issues a single-use OAuth code as the install page does when login installs the
// App: exchanging it gives a user access token that GET /user answers as login (AddUser first)
// and whose GET /user/installations lists installationIDs.
func (s *Server) InstallCode(login string, installationIDs ...int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	code, ok := s.installCodeLocked(login, installationIDs...)
	if !ok || login == "" {
		s.fatalf("InstallCode: no user %q (AddUser first)", login)
	}
	return code
}

// installCodeLocked issues the code of an install by login ("": by no known account, so GET /user
// refuses its token); false for a login the fake does not have. The caller holds s.mu.
func (s *Server) installCodeLocked(login string, installationIDs ...int64) (string, bool) {
	g := userGrant{ids: installationIDs}
	if login != "" {
		u := s.accounts[strings.ToLower(login)]
		if u == nil {
			return "", false
		}
		g.userID = u.ID
	}
	return s.issueCodeLocked(g), true
}

func (s *Server) getApp(w http.ResponseWriter, r *http.Request) {
	if err := s.checkAppJWT(r); err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, &github.App{
		ID:      github.Int64(s.AppID),
		Slug:    github.String(s.AppSlug),
		Name:    github.String(s.AppSlug),
		HTMLURL: github.String(s.WebURL() + "apps/" + s.AppSlug),
	})
}

// installation returns the installation named by the {id} path value, or nil.
func (s *Server) installation(r *http.Request) *installation {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.insts[id]
}

// installationJSON is an installation as GitHub shows it; the caller holds s.mu.
func (s *Server) installationJSON(in *installation) *github.Installation {
	perms := &github.InstallationPermissions{Contents: github.String("read"), Metadata: github.String("read")}
	if in.statuses {
		perms.Statuses = github.String("write")
	}
	if in.checks {
		perms.Checks = github.String("write")
	}
	return &github.Installation{
		Permissions:         perms,
		ID:                  github.Int64(in.id),
		AppID:               github.Int64(s.AppID),
		AppSlug:             github.String(s.AppSlug),
		TargetType:          github.String("Organization"),
		RepositorySelection: github.String("selected"),
		Account:             &github.User{Login: github.String(in.account), Type: github.String("Organization")},
		SuspendedAt:         suspendedAt(in),
	}
}

// appInstallation is the installation the request's path names, asked for with the App's JWT;
// nil once it has answered 401 (no valid JWT) or 404 (no such installation).
func (s *Server) appInstallation(w http.ResponseWriter, r *http.Request) *installation {
	if err := s.checkAppJWT(r); err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return nil
	}
	in := s.installation(r)
	if in == nil {
		writeError(w, http.StatusNotFound, "Not Found")
	}
	return in
}

func (s *Server) getInstallation(w http.ResponseWriter, r *http.Request) {
	in := s.appInstallation(w, r)
	if in == nil {
		return
	}
	s.mu.Lock()
	body := s.installationJSON(in)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	in := s.appInstallation(w, r)
	if in == nil {
		return
	}
	s.mu.Lock()
	if in.suspended {
		s.mu.Unlock()
		writeError(w, http.StatusForbidden, "This installation has been suspended")
		return
	}
	tok, exp := s.issueLocked(in.id)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, &github.InstallationToken{
		Token:       github.String(tok),
		ExpiresAt:   &github.Timestamp{Time: exp},
		Permissions: &github.InstallationPermissions{Contents: github.String("read"), Metadata: github.String("read")},
	})
}

func (s *Server) listInstallationRepos(w http.ResponseWriter, r *http.Request) {
	id, ok := s.authInstallation(w, r)
	if !ok {
		return
	}
	var repos []*github.Repository
	s.mu.Lock()
	for _, repo := range s.order {
		if repo.InstallationID == id {
			repos = append(repos, s.repoJSON(repo))
		}
	}
	s.mu.Unlock()
	lo, hi := page(w, r, len(repos))
	writeJSON(w, http.StatusOK, &github.ListRepositories{TotalCount: github.Int(len(repos)), Repositories: repos[lo:hi]})
}

func (s *Server) repoJSON(r *Repo) *github.Repository {
	owner, name, _ := cutFullName(r.FullName)
	visibility := "public"
	if r.Private {
		visibility = "private"
	}
	return &github.Repository{
		ID:            github.Int64(r.ID),
		Name:          github.String(name),
		FullName:      github.String(r.FullName),
		Owner:         &github.User{Login: github.String(owner), Type: github.String("Organization")},
		Private:       github.Bool(r.Private),
		Visibility:    github.String(visibility),
		DefaultBranch: github.String(r.DefaultBranch),
		HTMLURL:       github.String(s.WebURL() + r.FullName),
		CloneURL:      github.String(s.WebURL() + r.FullName + ".git"),
		URL:           github.String(s.URL() + "repos/" + r.FullName),
	}
}

// oauthToken is GitHub's web OAuth token exchange. Like GitHub it answers 200 with an "error"
// member when the client or the code is wrong, as JSON when asked to, else form-encoded.
func (s *Server) oauthToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing body")
		return
	}
	answer := func(v url.Values) {
		if r.Header.Get("Accept") == "application/json" {
			m := map[string]string{}
			for k := range v {
				m[k] = v.Get(k)
			}
			writeJSON(w, http.StatusOK, m)
			return
		}
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
		_, _ = w.Write([]byte(v.Encode()))
	}
	if r.PostForm.Get("client_id") != s.ClientID || r.PostForm.Get("client_secret") != s.ClientSecret {
		answer(url.Values{"error": {"incorrect_client_credentials"},
			"error_description": {"The client_id and/or client_secret passed are incorrect."}})
		return
	}
	s.mu.Lock()
	grant, ok := s.codes[r.PostForm.Get("code")]
	delete(s.codes, r.PostForm.Get("code"))
	if ok && !grant.expires.IsZero() && !s.now().Before(grant.expires) {
		ok = false
	}
	if ok {
		s.users[grant.token] = grant
	}
	s.mu.Unlock()
	if !ok {
		answer(url.Values{"error": {"bad_verification_code"},
			"error_description": {"The code passed is incorrect or expired."}})
		return
	}
	answer(url.Values{"access_token": {grant.token}, "token_type": {"bearer"}, "scope": {""}})
}

func (s *Server) listUserInstallations(w http.ResponseWriter, r *http.Request) {
	tok, _ := bearer(r)
	s.mu.Lock()
	grant, ok := s.users[tok]
	var list []*github.Installation
	for _, id := range grant.ids {
		if in := s.insts[id]; in != nil {
			list = append(list, s.installationJSON(in))
		}
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	slices.SortFunc(list, func(a, b *github.Installation) int { return cmp.Compare(a.GetID(), b.GetID()) })
	lo, hi := page(w, r, len(list))
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "installations": list[lo:hi]})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func suspendedAt(in *installation) *github.Timestamp {
	if !in.suspended {
		return nil
	}
	return &github.Timestamp{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}
