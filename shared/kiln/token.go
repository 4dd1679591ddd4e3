package kiln

import "time"

// Token is a user's API token.
type Token struct {
	Credential
	UserID    string
	ExpiresAt *time.Time
	// LastUsedAt is when the token was last used, if that was recorded.
	LastUsedAt *time.Time
	// ParentID is the token this one was created with (POST /auth/tokens), or "". Revoking a
	// token revokes the tokens created with it, and theirs.
	ParentID string
}

// Expired reports whether the token has expired at time now.
func (t *Token) Expired(now time.Time) bool { return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt) }
