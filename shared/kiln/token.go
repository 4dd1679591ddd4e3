package kiln

import "time"

// Token is an API token. Only the SHA-256 of the secret is kept; the secret is shown once when the
// token is made.
type Token struct {
	ID             string
	OrganizationID string
	UserID         string
	Name           string
	// Hash is the hex SHA-256 of the whole secret token.
	Hash string
	// Hint is the start of the secret ("kiln_AbC1"), enough for a person to tell tokens apart.
	Hint       string
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	// ParentID is the token this one was created with (POST /auth/tokens), or "". Revoking a
	// token revokes the tokens created with it, and theirs.
	ParentID string
}

// Expired reports whether the token has expired at time now.
func (t *Token) Expired(now time.Time) bool { return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt) }
