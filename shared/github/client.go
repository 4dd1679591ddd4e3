// Package github is kiln's GitHub App client: it reads the repositories of the installations
// studios link (repositories, branches, .uproject files) and runs the OAuth steps of the install
// flow and of "Sign in with GitHub". Every failure comes back as a *kiln.Error (use errors.As or kiln.ErrorCode) with one of
// kiln's codes or EGitHubUnavailable. Tokens never appear in errors.
package github

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	gh "github.com/google/go-github/v62/github"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Config configures a Client (KILN_GITHUB_* settings).
type Config struct {
	// APIURL is the REST base: https://api.github.com/ (the default) or, for GitHub Enterprise
	// Server, https://host/api/v3/.
	APIURL string
	// WebURL is the web base (install page, OAuth token exchange): https://github.com/ by default.
	WebURL        string
	AppID         int64
	PrivateKeyPEM []byte
	// Slug is the App's slug (its install page's path); "" asks GitHub for it when first needed.
	Slug string
	// ClientID and ClientSecret are the App's OAuth client, needed by the install flow and
	// sign-in (ExchangeCode, SignInURL) only.
	ClientID, ClientSecret string
	// HTTPClient defaults to a client with a 30-second timeout.
	HTTPClient *http.Client
	// Now defaults to time.Now.
	Now func() time.Time
}

// Client talks to GitHub as one GitHub App. It is safe for concurrent use.
type Client struct {
	cfg    Config
	key    *rsa.PrivateKey
	apiURL *url.URL
	webURL *url.URL
	base   *gh.Client // no credentials
	app    *gh.Client // authenticated as the App (JWT)

	mu     sync.Mutex
	jwt    string
	jwtIat time.Time
	jwtExp time.Time
	tokens map[int64]installationToken
	flight singleflight.Group
	slug   string
	// perms caches what installations granted (statuses, checks).
	perms map[int64]grantedPermissions

	trees   *lru.Cache[string, []string]     // tree sha → .uproject paths up to depth 3
	commits *lru.Cache[string, BranchCommit] // commit sha → commit summary
}

// Cache sizes: entries are small (a few paths, a commit message).
const (
	treeCacheSize   = 4096
	commitCacheSize = 8192
)

// New checks the configuration and parses the App's private key.
func New(cfg Config) (*Client, error) {
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api.github.com/"
	}
	if cfg.WebURL == "" {
		cfg.WebURL = "https://github.com/"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AppID <= 0 {
		return nil, errors.New("github: the App id is required")
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(cfg.PrivateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("github: the App private key is not an RSA key in PEM: %w", err)
	}
	c := &Client{cfg: cfg, key: key, tokens: map[int64]installationToken{}, slug: cfg.Slug,
		perms: map[int64]grantedPermissions{}}
	if c.apiURL, err = baseURL(cfg.APIURL); err != nil {
		return nil, fmt.Errorf("github: API URL: %w", err)
	}
	if c.webURL, err = baseURL(cfg.WebURL); err != nil {
		return nil, fmt.Errorf("github: web URL: %w", err)
	}
	c.base = gh.NewClient(cfg.HTTPClient)
	if c.apiURL.Host != "api.github.com" {
		if c.base, err = c.base.WithEnterpriseURLs(c.apiURL.String(), uploadURL(c.apiURL)); err != nil {
			return nil, fmt.Errorf("github: API URL: %w", err)
		}
	}
	appHTTP := *cfg.HTTPClient
	appHTTP.Transport = &appTransport{c: c, next: transportOf(cfg.HTTPClient)}
	c.app = gh.NewClient(&appHTTP)
	c.app.BaseURL, c.app.UploadURL = c.base.BaseURL, c.base.UploadURL
	c.trees, _ = lru.New[string, []string](treeCacheSize)
	c.commits, _ = lru.New[string, BranchCommit](commitCacheSize)
	return c, nil
}

// baseURL parses an absolute http(s) URL and makes its path end in "/".
func baseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// uploadURL is GitHub Enterprise Server's upload base for an API base (unused by kiln, but
// go-github wants one).
func uploadURL(api *url.URL) string {
	u := *api
	u.Path = strings.TrimSuffix(u.Path, "api/v3/") + "api/uploads/"
	return u.String()
}

func transportOf(hc *http.Client) http.RoundTripper {
	if hc.Transport != nil {
		return hc.Transport
	}
	return http.DefaultTransport
}

// installation returns a REST client authenticated with the installation's token.
func (c *Client) installation(ctx context.Context, installationID int64) (*gh.Client, error) {
	tok, err := c.installationToken(ctx, installationID)
	if err != nil {
		return nil, err
	}
	return c.base.WithAuthToken(tok), nil
}

// splitFullName checks an owner/repository name.
func splitFullName(fullName string) (owner, repo string, err error) {
	if !kiln.ValidRepoFullName(fullName) {
		return "", "", invalidField("repoFullName", "must be owner/repository")
	}
	owner, repo, _ = strings.Cut(fullName, "/")
	return owner, repo, nil
}
