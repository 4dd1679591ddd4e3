package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Principal is the caller of a request, as its API token or console session says.
type Principal struct {
	// Organization is the organization the caller acts for; nil for a session of a user who has
	// none yet (or has not chosen one).
	Organization *kiln.Organization
	// Member is the caller's membership of Organization; without an organization it holds only
	// the user, with no role.
	Member *kiln.Member
	// Token is the API token used, or nil.
	Token *kiln.Token
	// Session is the console session used, or nil.
	Session *kiln.Session
}

// CredentialKey names the token or session used, for per-credential budgets.
func (p *Principal) CredentialKey() string {
	if p.Session != nil {
		return "session:" + p.Session.ID
	}
	return "token:" + p.Token.ID
}

// ErrNoOrganization is the answer to a session that acts for no organization when the request
// needs one.
func ErrNoOrganization() error {
	return kiln.Errorf(kiln.EInsufficientScope,
		"this session acts for no organization yet: create one (POST /organizations) or switch to one (PUT /auth/session/organization)")
}

// Require returns insufficient_scope unless the caller acts for an organization in a role that
// allows the action. It is the one place where the role matrix is enforced.
func (p *Principal) Require(a kiln.Action) error {
	if p != nil && p.Organization == nil {
		return ErrNoOrganization()
	}
	if p == nil || !p.Member.Role.Allows(a) {
		return kiln.Errorf(kiln.EInsufficientScope, "your role may not do this")
	}
	return nil
}

// UserRef is the caller in the form builds record it: user:<userId>.
func (p *Principal) UserRef() string { return "user:" + p.Member.User.ID }

// TokenStore is what the authenticator needs from the store.
type TokenStore interface {
	GetTokenByHash(ctx context.Context, hash string) (*kiln.Token, error)
	GetMember(ctx context.Context, orgID, userID string) (*kiln.Member, error)
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
	GetSessionByHash(ctx context.Context, hash string) (*kiln.Session, error)
	GetGitHubUser(ctx context.Context, userID string) (*kiln.GitHubUser, error)
}

// Authenticator resolves bearer tokens and console sessions.
type Authenticator struct {
	Store TokenStore
	Now   func() time.Time
	// CacheTTL is how long a resolved API token is reused without asking the store (sessions
	// are always read); 0 turns the cache off.
	CacheTTL time.Duration
	cache    principalCache
}

// ForgetToken drops a token from the cache (it was revoked).
func (a *Authenticator) ForgetToken(tokenID string) {
	a.cache.forget(func(p *Principal) bool { return p.Token.ID == tokenID })
}

// ForgetUser drops a user's tokens in an organization from the cache (a revocation that takes the
// tokens created from the revoked one with it, a removal, a role change).
func (a *Authenticator) ForgetUser(orgID, userID string) {
	a.cache.forget(func(p *Principal) bool { return p.Organization.ID == orgID && p.Member.User.ID == userID })
}

// ForgetOrganization drops an organization's principals from the cache (it changed).
func (a *Authenticator) ForgetOrganization(orgID string) {
	a.cache.forget(func(p *Principal) bool { return p.Organization.ID == orgID })
}

var errInvalidToken = kiln.Errorf(kiln.EInvalidToken, "the bearer token is missing, malformed, unknown, expired or revoked")

// ErrInvalidToken is returned for every token that does not resolve; it never says which reason.
func ErrInvalidToken() error { return errInvalidToken }

// Resolve finds the caller for an API token or console session secret.
func (a *Authenticator) Resolve(ctx context.Context, secret string) (*Principal, error) {
	token := WellFormed(secret)
	if !token && !WellFormedSession(secret) {
		return nil, errInvalidToken
	}
	hash := HashToken(secret)
	now := a.now()
	if !token {
		// Sessions are never cached: a console's requests are few, and a session signed out,
		// switched or removed elsewhere (another Lambda instance) must stop or change at once.
		return a.resolveSession(ctx, hash, now)
	}
	if a.CacheTTL > 0 {
		if p := a.cache.get(hash, now); p != nil && !p.Token.Expired(now) {
			return p, nil
		}
	}
	p, err := a.resolveToken(ctx, hash, now)
	if err != nil {
		return nil, err
	}
	if a.CacheTTL > 0 {
		a.cache.put(hash, p, now.Add(a.CacheTTL))
	}
	return p, nil
}

func (a *Authenticator) resolveToken(ctx context.Context, hash string, now time.Time) (*Principal, error) {
	tok, err := a.Store.GetTokenByHash(ctx, hash)
	if err != nil {
		return nil, notFoundAs(err, "look up token")
	}
	if tok.Expired(now) {
		return nil, errInvalidToken
	}
	p, err := a.membership(ctx, tok.OrganizationID, tok.UserID)
	if err != nil {
		return nil, err
	}
	p.Token = tok
	return p, nil
}

// resolveSession finds a session's user and, when it acts for an organization, their membership
// of it: a session of a member who was removed from its organization no longer resolves.
func (a *Authenticator) resolveSession(ctx context.Context, hash string, now time.Time) (*Principal, error) {
	sess, err := a.Store.GetSessionByHash(ctx, hash)
	if err != nil {
		return nil, notFoundAs(err, "look up session")
	}
	if sess.Expired(now) {
		return nil, errInvalidToken
	}
	if sess.OrganizationID == "" {
		u, err := a.Store.GetGitHubUser(ctx, sess.UserID)
		if err != nil {
			return nil, notFoundAs(err, "look up user")
		}
		return &Principal{Member: &kiln.Member{User: u.User}, Session: sess}, nil
	}
	p, err := a.membership(ctx, sess.OrganizationID, sess.UserID)
	if err != nil {
		return nil, err
	}
	p.Session = sess
	return p, nil
}

func (a *Authenticator) membership(ctx context.Context, orgID, userID string) (*Principal, error) {
	m, err := a.Store.GetMember(ctx, orgID, userID)
	if err != nil {
		return nil, notFoundAs(err, "look up member")
	}
	org, err := a.Store.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, notFoundAs(err, "look up organization")
	}
	return &Principal{Organization: org, Member: m}, nil
}

func (a *Authenticator) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// notFoundAs turns a missing record into invalid_token and wraps anything else.
func notFoundAs(err error, op string) error {
	if kiln.IsCode(err, kiln.ENotFound) {
		return errInvalidToken
	}
	return fmt.Errorf("auth: %s: %w", op, err)
}

// ResolveHash finds the caller again for a credential resolved before, by its hash (HashToken)
// and kind, without the cache: a socket that stays connected checks it again this way after a
// revocation or a removal.
func (a *Authenticator) ResolveHash(ctx context.Context, hash string, session bool) (*Principal, error) {
	if session {
		return a.resolveSession(ctx, hash, a.now())
	}
	return a.resolveToken(ctx, hash, a.now())
}
