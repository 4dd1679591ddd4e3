package auth

import (
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// SessionPrefix starts every console session secret, apart from every kind of token.
const SessionPrefix = "ksess_"

// NewSession makes a console session for a user who has just signed in, acting for orgID ("" when
// the user belongs to no organization yet), valid for kiln.SessionTTL: the secret to hand to the
// console once, and the record to store, which holds only the secret's hash.
func NewSession(userID, orgID, userAgent, address string, now time.Time) (secret string, s *kiln.Session) {
	now = now.UTC().Truncate(time.Millisecond)
	secret = SessionPrefix + randomString(tokenRandomLength)
	if len(userAgent) > 200 {
		userAgent = userAgent[:200]
	}
	return secret, &kiln.Session{
		ID: kiln.NewID(), UserID: userID, Hash: HashToken(secret), OrganizationID: orgID,
		CreatedAt: now, ExpiresAt: now.Add(kiln.SessionTTL), UserAgent: strings.ToValidUTF8(userAgent, ""), Address: address,
	}
}

// WellFormedSession reports whether s has the shape of a session secret.
func WellFormedSession(s string) bool {
	rest, ok := strings.CutPrefix(s, SessionPrefix)
	return ok && wellFormedRandom(rest)
}
