package kiln

import "time"

// SessionTTL is how long a console session lasts from sign-in; it is not extended by use.
const SessionTTL = 12 * time.Hour

// Session is a signed-in user's console session. Only the SHA-256 of its secret is kept. A
// session acts for one organization at a time (OrganizationID, "" before the user has one) and
// may be switched to any other organization the user belongs to.
type Session struct {
	ID     string
	UserID string
	// Hash is the hex SHA-256 of the session's secret.
	Hash string
	// OrganizationID is the organization the session acts for, or "".
	OrganizationID string
	CreatedAt      time.Time
	ExpiresAt      time.Time
	// UserAgent and Address are the browser and client address that signed in, to tell a user's
	// sessions apart.
	UserAgent string
	Address   string
}

// Expired reports whether the session has expired at time now.
func (s *Session) Expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }

// GitHubUser is a kiln user who signs in with GitHub, keyed by GitHub's user id. Their email is
// their GitHub account's verified primary email as of their last sign-in.
type GitHubUser struct {
	User
	GitHubID int64
	Login    string
}
