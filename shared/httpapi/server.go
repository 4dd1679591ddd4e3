// Package httpapi is kiln's HTTP API on net/http: one router that `kiln serve` listens with and
// that the API Lambdas wrap. Conventions (error envelope, request ids, limits) follow
// docs/api.md and are described in docs/api.md.
package httpapi

import (
	"cmp"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/buildsettings"
	"github.com/kilnbuild/kiln/shared/console"
	"github.com/kilnbuild/kiln/shared/downloads"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/plans"
	"github.com/kilnbuild/kiln/shared/store"
)

// Config is what the API is built from.
type Config struct {
	Store     store.Store
	Keys      *keyring.Keyring
	Logger    *slog.Logger
	RateLimit RateLimit
	// BuildSettings saves build settings under their rules (nil: one built from this Config,
	// without an upload URL check). The API gives it Engines and BuildTimeLimit.
	BuildSettings *buildsettings.Service
	// Engines tells which engine versions builds can use.
	Engines Engines
	// BuildTimeLimit is the longest a build may run on this service (0: none of its own); a
	// build setting's timeoutMinutes may only lower it.
	BuildTimeLimit time.Duration
	// GitHub is the GitHub App, or nil when the server has none configured.
	GitHub GitHubApp
	// GitHubOAuth is true when the App's OAuth client is configured: installations are then
	// linked only through the verified install flow.
	GitHubOAuth bool
	// Builds starts and cancels builds.
	Builds *builds.Service
	// Plans checks what organizations' plans allow (nil: everything).
	Plans *plans.Plans
	// Artifacts holds the artifact files; Logs the build logs.
	Artifacts artifacts.Store
	Logs      LogReader
	// PublicURL is the base of the signed download URLs (KILN_PUBLIC_URL).
	PublicURL string
	// Deliveries re-runs auto deploy deliveries (nil: not available).
	Deliveries Deliveries
	// Webhooks redelivers organization webhook deliveries.
	Webhooks WebhookDispatcher
	// OutboundAllow are the ranges (KILN_OUTBOUND_ALLOW) a chat webhook's URL may point at, by IP
	// address, instead of its service's host: a test server or the operator's relay.
	OutboundAllow []netip.Prefix
	// Perforce checks Perforce credentials (nil: not available).
	Perforce PerforceVerifier
	// GitHubWebhookSecret verifies GitHub webhook deliveries; empty refuses them all.
	GitHubWebhookSecret string
	// GitHubWebhookReads is how many GitHub webhook bodies are read at once (more answer 429);
	// 0 means DefaultGitHubWebhookReads.
	GitHubWebhookReads int
	// AuthCacheTTL is how long a resolved token is reused before the store is asked again
	// (changes made through this server apply at once); 0 turns the cache off.
	AuthCacheTTL time.Duration
	// BufferedAnswers is true where the API answers through a proxy that holds whole answers and
	// bounds their size and time (API Gateway in front of Lambda: at most 6 MB, 30 s): there a
	// log is not streamed (follow=1) nor sent whole as text past MaxBufferedTextLog bytes; both
	// answer 400 log_paging_required, pointing to the JSON pages.
	BufferedAnswers bool
	// BuildCaches are the organizations' build caches (nil: this server keeps none): the usage
	// report shows what they hold, and a deleted project's are removed.
	BuildCaches BuildCaches
	// BuildCacheMaxPerOrg caps the bytes of one organization's build caches (0: no cap), as
	// the usage report shows it.
	BuildCacheMaxPerOrg int64
	// Mail sends invitation links (nil: they are only shown to the inviter).
	Mail Mailer
	// Sockets are the sockets of live build events (nil: none): after a revocation, a removal,
	// a role change or a sign-out, those of the organization check their credential again.
	Sockets Sockets
	// SignIn is GitHub sign-in (KILN_SIGNUP=github): people sign in to the console with GitHub
	// and create their own organizations. nil turns both off; the console then signs in with an
	// API token.
	SignIn GitHubSignIn
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server is the API's http.Handler.
type Server struct {
	stores
	settings       *buildsettings.Service
	settingsReader settingReader
	github         GitHubApp
	githubOAuth    bool
	sealer         *keyring.Sealer
	stateKey       []byte
	downloads      downloads.Signer
	builds         *builds.Service
	plans          *plans.Plans
	deliveries     Deliveries
	webhookSender  WebhookDispatcher
	chatAllow      []netip.Prefix
	perforce       PerforceVerifier
	buffered       bool
	artifacts      artifacts.Store
	logs           LogReader
	mail           Mailer
	signIn         GitHubSignIn
	publicURL      string
	caches         BuildCaches
	cacheMax       int64
	sockets        Sockets
	webhookSecret  []byte
	webhookReads   chan struct{} // a slot per webhook body being read
	auth           *auth.Authenticator
	cursors        cursors
	limits         *limiters
	followers      inUse // log followers per build and per token
	p4checks       *perforceChecks
	logger         *slog.Logger
	now            func() time.Time
	mux            *http.ServeMux
	handler        http.Handler
}

// New builds the API.
func New(cfg Config) *Server {
	s := &Server{
		stores:         storesOf(cfg.Store),
		settings:       settingsService(cfg),
		settingsReader: cfg.Store,
		github:         cfg.GitHub,
		githubOAuth:    cfg.GitHubOAuth,
		sealer:         cfg.Keys.Sealer(),
		stateKey:       cfg.Keys.Key(keyring.PurposeState),
		downloads:      downloads.Signer{Key: cfg.Keys.Key(keyring.PurposeDownload), BaseURL: cfg.PublicURL},
		builds:         cfg.Builds,
		plans:          cfg.Plans,
		deliveries:     cfg.Deliveries,
		webhookSender:  cfg.Webhooks,
		chatAllow:      cfg.OutboundAllow,
		perforce:       cfg.Perforce,
		buffered:       cfg.BufferedAnswers,
		artifacts:      cfg.Artifacts,
		logs:           cfg.Logs,
		mail:           cfg.Mail,
		signIn:         cfg.SignIn,
		publicURL:      cfg.PublicURL,
		caches:         cfg.BuildCaches,
		cacheMax:       cfg.BuildCacheMaxPerOrg,
		sockets:        cfg.Sockets,
		webhookSecret:  []byte(cfg.GitHubWebhookSecret),
		webhookReads:   make(chan struct{}, cmp.Or(max(cfg.GitHubWebhookReads, 0), DefaultGitHubWebhookReads)),
		cursors:        cursors{key: cfg.Keys.Key(keyring.PurposeCursor)},
		limits:         newLimiters(cfg.RateLimit),
		p4checks:       newPerforceChecks(),
		logger:         cfg.Logger,
		now:            cfg.Now,
		mux:            http.NewServeMux(),
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.auth = &auth.Authenticator{Store: cfg.Store, Now: s.now, CacheTTL: cfg.AuthCacheTTL}
	s.routes()
	s.handler = s.withRequestContext(s.mux)
	return s
}

// settingsService is cfg's build settings service, with the deployment's engines and build time
// limit.
func settingsService(cfg Config) *buildsettings.Service {
	var svc buildsettings.Service
	if cfg.BuildSettings != nil {
		svc = *cfg.BuildSettings
	} else {
		svc = buildsettings.Service{Store: cfg.Store, Sealer: cfg.Keys.Sealer(), Now: cfg.Now}
		if cfg.Plans != nil {
			svc.Plans = cfg.Plans
		}
	}
	svc.Engines, svc.TimeLimit = cfg.Engines, cfg.BuildTimeLimit
	return &svc
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// methods maps HTTP methods to the handlers of one path.
type methods map[string]http.Handler

// handle registers the handlers of a path, and a 405 with Allow for every other method.
func (s *Server) handle(path string, ms methods) {
	allowed := make([]string, 0, len(ms)+1)
	for m, h := range ms {
		s.mux.Handle(m+" "+path, h)
		allowed = append(allowed, m)
		if m == http.MethodGet {
			allowed = append(allowed, http.MethodHead)
		}
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	notAllowed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, r, kiln.Errorf(eMethodNotAllowed, "%s is not allowed here; allowed: %s", r.Method, allow))
	})
	// One 405 pattern per other method, rather than one without a method, so that a literal path
	// (/projects/add-repo) and a wildcard sibling (/projects/{id}) never conflict.
	for _, m := range standardMethods {
		if !slices.Contains(allowed, m) {
			s.mux.Handle(m+" "+path, notAllowed)
		}
	}
}

// standardMethods are the methods that get a 405 where a path does not take them; others get 404.
var standardMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	if console.WantsPage(r) { // a browser at the service's address: the console
		http.Redirect(w, r, console.Prefix, http.StatusFound)
		return
	}
	writeError(w, r, kiln.Errorf(kiln.ENotFound, "no such endpoint: %s", r.URL.Path))
}

// apiHandler is an authenticated handler; a returned error is written as the envelope.
type apiHandler func(w http.ResponseWriter, r *http.Request, p *auth.Principal) error

// authed wraps a handler whose caller must act for an organization in a role that allows the
// action: signedIn, then the role check.
func (s *Server) authed(action kiln.Action, h apiHandler) http.Handler {
	return s.signedIn(func(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
		if err := p.Require(action); err != nil {
			return err
		}
		return h(w, r, p)
	})
}

// signedIn resolves the bearer token or session and applies the caller's rate limit before
// calling h; it asks for no organization or role (who am I, sessions, switching, creating an
// organization).
func (s *Server) signedIn(h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := s.now()
		p, err := s.authenticate(r)
		if err != nil {
			// Failed attempts are limited per client address, so guessing is slow.
			if !s.rateLimit(w, r, "addr:"+clientAddr(r), now) {
				return
			}
			writeError(w, r, err)
			return
		}
		stateOf(r.Context()).principal = p
		if !s.rateLimit(w, r, p.CredentialKey(), now) {
			return
		}
		if err := h(w, r, p); err != nil {
			writeError(w, r, err)
		}
	})
}

func (s *Server) authenticate(r *http.Request) (*auth.Principal, error) {
	secret, ok := bearerToken(r)
	if !ok {
		return nil, auth.ErrInvalidToken()
	}
	return s.auth.Resolve(r.Context(), secret)
}

// bearerToken is the request's "Authorization: Bearer <secret>" secret.
func bearerToken(r *http.Request) (string, bool) {
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(secret), true
}

// rateLimit takes a request from key's budget; when it is spent it answers 429 with Retry-After
// and returns false.
func (s *Server) rateLimit(w http.ResponseWriter, r *http.Request, key string, now time.Time) bool {
	if err := s.overLimit(w, key, now); err != nil {
		writeError(w, r, err)
		return false
	}
	return true
}

// overLimit takes one request from key's budget; over it, it sets Retry-After and returns the
// rate_limited error to answer.
func (s *Server) overLimit(w http.ResponseWriter, key string, now time.Time) error {
	ok, wait := s.limits.allow(key, now)
	if ok {
		return nil
	}
	secs := retryAfterSeconds(wait)
	w.Header().Set("Retry-After", itoa(secs))
	return kiln.Errorf(kiln.ERateLimited, "too many requests; retry after %d s", secs)
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
