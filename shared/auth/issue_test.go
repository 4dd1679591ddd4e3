package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// TestIssueToken: a token is issued as a child of the caller's, a user holds at most
// MaxTokensPerUser, and a caller whose token was revoked meanwhile is refused.
func TestIssueToken(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, st auth.TokenIssuer, p *auth.Principal)
		code    string
	}{
		{"Issued", func(*testing.T, auth.TokenIssuer, *auth.Principal) {}, ""},
		{"AtTheLimit", func(t *testing.T, st auth.TokenIssuer, p *auth.Principal) {
			for range auth.MaxTokensPerUser - 1 { // the owner's first token counts
				if _, _, err := auth.IssueToken(ctx, st, p, "ci", 0, now); err != nil {
					t.Fatal(err)
				}
			}
		}, kiln.EInvalidState},
		{"CallerRevoked", func(t *testing.T, _ auth.TokenIssuer, p *auth.Principal) {
			p.Token.ID = kiln.NewID() // a token the store does not hold (revoked)
		}, kiln.EInvalidToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storefixture.SQLite(t)
			org, secret := storefixture.Org(t, st, "", now)
			a := &auth.Authenticator{Store: st, Now: func() time.Time { return now }}
			p, err := a.Resolve(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, st, p)
			got, tok, err := auth.IssueToken(ctx, st, p, "laptop", 24*time.Hour, now)
			if tc.code != "" {
				if !kiln.IsCode(err, tc.code) {
					t.Fatalf("IssueToken: %v; want %s", err, tc.code)
				}
				return
			}
			if err != nil || got == "" || tok.ParentID != p.Token.ID || tok.OrganizationID != org.ID || tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(now.Add(24*time.Hour)) {
				t.Fatalf("IssueToken = %q, %+v, %v", got, tok, err)
			}
			if p2, err := a.Resolve(ctx, got); err != nil || p2.Token.ID != tok.ID {
				t.Fatalf("the issued token does not resolve to itself: %v %v", p2, err)
			}
		})
	}
}
