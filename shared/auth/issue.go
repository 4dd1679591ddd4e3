package auth

import (
	"context"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// MaxTokensPerUser is the most API tokens a user may hold in an organization (expired ones count
// until deleted).
const MaxTokensPerUser = 100

// MaxTokenDays bounds the lifetime a token may be given.
const MaxTokenDays = 3650

// TokenIssuer is what issuing an API token reads and writes.
type TokenIssuer interface {
	ListTokens(ctx context.Context, orgID, userID string, p store.Page) ([]*kiln.Token, string, error)
	CreateToken(ctx context.Context, t *kiln.Token) error
}

// TokenLifetime checks a requested lifetime in days (nil: the token never expires) and returns
// it, adding a field error under field when it is out of range.
func TokenLifetime(field string, days *int, errs kiln.FieldErrors) time.Duration {
	if days == nil {
		return 0
	}
	if *days < 1 || *days > MaxTokenDays {
		errs.Add(field, "must be between 1 and 3650")
		return 0
	}
	return time.Duration(*days) * 24 * time.Hour
}

// IssueToken makes a new API token for the caller p in its organization, named name and expiring
// after ttl (0: never). It is a child of the token p used, if p used one: revoking that one
// revokes this one too. A user holds at most MaxTokensPerUser; a caller whose token was revoked meanwhile gets
// ErrInvalidToken. The secret is returned once and never stored.
func IssueToken(ctx context.Context, st TokenIssuer, p *Principal, name string, ttl time.Duration, now time.Time) (string, *kiln.Token, error) {
	held, _, err := st.ListTokens(ctx, p.Organization.ID, p.Member.User.ID, store.Page{Limit: MaxTokensPerUser})
	if err != nil {
		return "", nil, err
	}
	if len(held) >= MaxTokensPerUser {
		return "", nil, kiln.Errorf(kiln.EInvalidState, "you hold %d tokens, the most a user may have; revoke one (DELETE /auth/tokens/:id) first", MaxTokensPerUser)
	}
	secret, tok := NewToken(p.Organization.ID, p.Member.User.ID, name, now, ttl)
	if p.Token != nil {
		tok.ParentID = p.Token.ID
	}
	if err := st.CreateToken(ctx, tok); kiln.IsCode(err, kiln.ENotFound) {
		return "", nil, ErrInvalidToken() // the caller's token was revoked meanwhile
	} else if err != nil {
		return "", nil, err
	}
	return secret, tok, nil
}
