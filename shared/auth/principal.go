package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Principal is the caller of a request, as its token says.
type Principal struct {
	Organization *kiln.Organization
	Member       *kiln.Member
	Token        *kiln.Token
}

// Require returns insufficient_scope unless the caller's role allows the action. It is the one
// place where the role matrix is enforced.
func (p *Principal) Require(a kiln.Action) error {
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
}

// Authenticator resolves bearer tokens.
type Authenticator struct {
	Store TokenStore
	Now   func() time.Time
	// CacheTTL is how long a resolved token is reused without asking the store; 0 turns the
	// cache off.
	CacheTTL time.Duration
	cache    principalCache
}

// ForgetToken drops a token from the cache (it was revoked).
func (a *Authenticator) ForgetToken(tokenID string) {
	a.cache.forget(func(p *Principal) bool { return p.Token.ID == tokenID })
}

// ForgetUser drops a user's tokens from the cache (a revocation that takes the tokens created
// from the revoked one with it).
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

// Resolve finds the caller for a token secret.
func (a *Authenticator) Resolve(ctx context.Context, secret string) (*Principal, error) {
	if !WellFormed(secret) {
		return nil, errInvalidToken
	}
	hash := HashToken(secret)
	now := a.now()
	if a.CacheTTL > 0 {
		if p := a.cache.get(hash, now); p != nil && !p.Token.Expired(now) {
			return p, nil
		}
	}
	tok, err := a.Store.GetTokenByHash(ctx, hash)
	if err != nil {
		return nil, notFoundAs(err, "look up token")
	}
	if tok.Expired(now) {
		return nil, errInvalidToken
	}
	m, err := a.Store.GetMember(ctx, tok.OrganizationID, tok.UserID)
	if err != nil {
		return nil, notFoundAs(err, "look up member")
	}
	org, err := a.Store.GetOrganization(ctx, tok.OrganizationID)
	if err != nil {
		return nil, notFoundAs(err, "look up organization")
	}
	p := &Principal{Organization: org, Member: m, Token: tok}
	if a.CacheTTL > 0 {
		a.cache.put(hash, p, now.Add(a.CacheTTL))
	}
	return p, nil
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
