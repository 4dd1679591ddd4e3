// Package githubtest is a fake GitHub for tests: the REST endpoints kiln's GitHub App client uses,
// answered with go-github's own types so the shapes are GitHub's, and git smart HTTP for cloning.
// Repositories are real bare git repositories on disk, made and read with the git CLI.
//
// The API is served GitHub Enterprise style under URL() (".../api/v3/"); the web side (OAuth
// web flow and token exchange, the App's install page, clone URLs "<server>/<owner>/<repo>.git")
// under WebURL().
package githubtest

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Routes, as counted by Requests and failed by Fail. API routes are relative to URL().
const (
	RouteApp               = "GET /app"
	RouteInstallation      = "GET /app/installations/{id}"
	RouteAccessToken       = "POST /app/installations/{id}/access_tokens"
	RouteInstallationRepos = "GET /installation/repositories"
	RouteUserInstallations = "GET /user/installations"
	RouteRepo              = "GET /repos/{owner}/{repo}"
	RouteBranches          = "GET /repos/{owner}/{repo}/branches"
	RouteBranch            = "GET /repos/{owner}/{repo}/branches/{branch...}"
	RouteCommit            = "GET /repos/{owner}/{repo}/commits/{sha}"
	RouteTree              = "GET /repos/{owner}/{repo}/git/trees/{sha}"
	RouteContents          = "GET /repos/{owner}/{repo}/contents/{path...}"
	RouteOAuthToken        = "POST /login/oauth/access_token"
	RouteUser              = "GET /user"
	RouteUserEmails        = "GET /user/emails"
	// RouteAuthorizePage is the web page where a user authorizes the App (OAuth web flow), and
	// RouteAuthorize its form, which sends the browser back with a code.
	RouteAuthorizePage = "GET /login/oauth/authorize"
	RouteAuthorize     = "POST /login/oauth/authorize"
	// RouteInstallPage is the App's public install page (GitHub's "Install <App>"), and
	// RouteInstall its form, which sends the browser to the App's Setup URL.
	RouteInstallPage = "GET /apps/{slug}/installations/new"
	RouteInstall     = "POST /apps/{slug}/installations/new"
	// RouteGit covers every smart HTTP request under /{owner}/{repo}.git/.
	RouteGit = "git"
)

// Server is a fake GitHub with one GitHub App.
type Server struct {
	AppID         int64
	AppSlug       string
	PrivateKeyPEM []byte
	ClientID      string
	ClientSecret  string
	// SetupURL is where the install page sends the installer after an install, as a GitHub App's
	// Setup URL (an absolute http(s) URL); empty, the install page is refused. Set it before the
	// page is used.
	SetupURL string

	clock     atomic.Pointer[func() time.Time]
	treeLimit atomic.Int64
	t         TB
	http      *httptest.Server
	root      string // bare repositories: root/<owner>/<repo>.git
	mu        sync.Mutex
	insts     map[int64]*installation
	repos     map[string]*Repo // by lower-case full name
	order     []*Repo          // in creation order
	// tokens maps an installation token to its installation and expiry.
	tokens map[string]issuedToken
	codes  map[string]userGrant // OAuth codes not yet exchanged
	users  map[string]userGrant // user access token → what it was granted
	// accounts are the users that can sign in, by lower-case login; logins is their order.
	accounts map[string]*User
	logins   []string
	counts   map[string]int
	fails    map[string]int
	nextID   int64
	// statuses are the commit statuses received, oldest first.
	statuses []Status
	// checkRuns are the check runs created, oldest first.
	checkRuns []*CheckRun
}

type installation struct {
	id      int64
	account string
	// statuses is whether the installation granted statuses: write.
	statuses bool
	// checks is whether the installation granted checks: write.
	checks    bool
	suspended bool
}

type issuedToken struct {
	installationID int64
	expires        time.Time
}

// userGrant is what an OAuth code gives once exchanged.
type userGrant struct {
	token string
	// ids are the installations GET /user/installations lists for the token.
	ids []int64
	// userID is the account GET /user answers with (0: none, the token came from AuthorizeUser).
	userID int64
	// expires is when the code stops being accepted (zero: never).
	expires time.Time
}

// New starts a fake GitHub on 127.0.0.1; it stops when the test ends.
func New(t TB) *Server {
	t.Helper()
	return NewAt(t, "")
}

// NewAt starts a fake GitHub listening on addr (a loopback host:port), or on a free port of
// 127.0.0.1 when addr is empty: a program such as cmd/fakegithub wants a fixed address.
func NewAt(t TB, addr string) *Server {
	t.Helper()
	s := &Server{
		AppID:         4242,
		AppSlug:       "kiln-test",
		PrivateKeyPEM: appKeyPEM(t),
		ClientID:      "Iv1.kilntestclient",
		ClientSecret:  "kiln-test-client-secret",
		t:             t,
		root:          t.TempDir(),
		insts:         map[int64]*installation{},
		repos:         map[string]*Repo{},
		tokens:        map[string]issuedToken{},
		codes:         map[string]userGrant{},
		users:         map[string]userGrant{},
		accounts:      map[string]*User{},
		counts:        map[string]int{},
		fails:         map[string]int{},
		nextID:        1000,
	}
	s.SetNow(time.Now)
	api := http.NewServeMux()
	s.handle(api, RouteApp, s.getApp)
	s.handle(api, RouteInstallation, s.getInstallation)
	s.handle(api, RouteAccessToken, s.createToken)
	s.handle(api, RouteInstallationRepos, s.listInstallationRepos)
	s.handle(api, RouteUserInstallations, s.listUserInstallations)
	s.handle(api, RouteUser, s.getUser)
	s.handle(api, RouteUserEmails, s.listUserEmails)
	s.handle(api, RouteRepo, s.getRepo)
	s.handle(api, RouteBranches, s.listBranches)
	s.handle(api, RouteBranch, s.getBranch)
	s.handle(api, RouteCommit, s.getCommit)
	s.handle(api, RouteTree, s.getTree)
	s.handle(api, RouteContents, s.getContents)
	s.handle(api, RouteStatuses, s.createStatus)
	s.handle(api, RouteCreateCheckRun, s.createCheckRun)
	s.handle(api, RouteUpdateCheckRun, s.updateCheckRun)
	s.handle(api, RouteListCheckRuns, s.listCheckRuns)
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { writeError(w, http.StatusNotFound, "Not Found") })

	root := http.NewServeMux()
	root.Handle("/api/v3/", http.StripPrefix("/api/v3", api))
	s.handle(root, RouteOAuthToken, s.oauthToken)
	s.handle(root, RouteAuthorizePage, s.authorizePage)
	s.handle(root, RouteAuthorize, s.authorize)
	s.handle(root, RouteInstallPage, s.installPage)
	s.handle(root, RouteInstall, s.install)
	s.handleAs(root, "/", RouteGit, s.serveGit)

	s.http = httptest.NewUnstartedServer(root) // listens on 127.0.0.1
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("githubtest: listen on %s: %v", addr, err)
		}
		s.http.Listener.Close()
		s.http.Listener = ln
	}
	s.http.Start()
	t.Cleanup(s.http.Close)
	return s
}

// URL is the REST API base, ending in "/api/v3/".
func (s *Server) URL() string { return s.http.URL + "/api/v3/" }

// WebURL is the web base, ending in "/".
func (s *Server) WebURL() string { return s.http.URL + "/" }

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.http.Client() }

// Requests reports how many requests reached a route (one of the Route constants); "" counts all.
func (s *Server) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if route == "" {
		n := 0
		for _, c := range s.counts {
			n += c
		}
		return n
	}
	return s.counts[route]
}

// ResetRequests sets every counter back to zero.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.counts)
}

// Fail makes every later request to route answer status with a GitHub-style error body (429 with
// Retry-After, like GitHub's secondary rate limit); status 0 heals the route.
func (s *Server) Fail(route string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.fails, route)
		return
	}
	s.fails[route] = status
}

// FailRateLimited makes route answer 403 with X-RateLimit-Remaining: 0, GitHub's primary rate
// limit.
func (s *Server) FailRateLimited(route string) { s.Fail(route, rateLimited) }

const rateLimited = -403

func (s *Server) handle(mux *http.ServeMux, route string, h http.HandlerFunc) {
	s.handleAs(mux, route, route, h)
}

// handleAs serves pattern with h, counting and failing it as route.
func (s *Server) handleAs(mux *http.ServeMux, pattern, route string, h http.HandlerFunc) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[route]++
		status := s.fails[route]
		s.mu.Unlock()
		switch {
		case status == rateLimited:
			w.Header().Set("X-RateLimit-Limit", "5000")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(s.now().Add(time.Hour).Unix(), 10))
			writeError(w, http.StatusForbidden, "API rate limit exceeded")
		case status == http.StatusTooManyRequests:
			w.Header().Set("Retry-After", "60")
			writeError(w, status, "You have exceeded a secondary rate limit")
		case status != 0:
			writeError(w, status, http.StatusText(status))
		default:
			h(w, r)
		}
	})
}

// SetNow replaces the fake's clock (token expiry, App JWT checks), e.g. with a test's clock.
func (s *Server) SetNow(now func() time.Time) { s.clock.Store(&now) }

func (s *Server) now() time.Time { return (*s.clock.Load())() }

// SetTreeLimit makes recursive tree listings longer than n entries come back truncated, as GitHub
// does for very large trees; 0 lifts the limit.
func (s *Server) SetTreeLimit(n int) { s.treeLimit.Store(int64(n)) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers like GitHub: {"message": ..., "documentation_url": ...}.
func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{
		"message":           message,
		"documentation_url": "https://docs.github.com/rest",
	})
}

func (s *Server) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("githubtest: "+format, args...)
}

// newIDLocked is newID for a caller that does not hold s.mu.
func (s *Server) newIDLocked() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newID()
}

func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}
