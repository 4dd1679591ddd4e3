package auth

import (
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// InvitationPrefix starts every invitation secret, apart from every kind of token.
const InvitationPrefix = "kinv_"

// NewInvitation makes an invitation of the organization for email with role, by inviter, valid
// for kiln.InvitationTTL: the secret to put in the link, shown once, and the record to store,
// which holds only the secret's hash.
func NewInvitation(orgID, email string, role kiln.Role, inviter kiln.User, now time.Time) (secret string, inv *kiln.Invitation) {
	now = now.UTC().Truncate(time.Millisecond)
	secret = InvitationPrefix + randomString(tokenRandomLength)
	return secret, &kiln.Invitation{
		ID: kiln.NewID(), OrganizationID: orgID, Email: strings.TrimSpace(email), Role: role,
		Hash: HashToken(secret), InvitedByID: inviter.ID, InvitedByName: inviter.Name,
		CreatedAt: now, ExpiresAt: now.Add(kiln.InvitationTTL),
	}
}

// WellFormedInvitation reports whether s has the shape of an invitation secret, so that
// malformed ones are refused without a store lookup.
func WellFormedInvitation(s string) bool {
	rest, ok := strings.CutPrefix(s, InvitationPrefix)
	return ok && wellFormedRandom(rest)
}
