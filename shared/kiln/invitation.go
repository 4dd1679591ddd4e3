package kiln

import "time"

// InvitationTTL is how long an invitation link stays valid.
const InvitationTTL = 7 * 24 * time.Hour

// Invitation asks a person, by email, to join an organization with a role. Its secret (the link)
// is shown once to the inviter; only its SHA-256 is kept. Accepting it creates the member and
// removes the invitation, so a link works once.
type Invitation struct {
	ID             string
	OrganizationID string
	Email          string
	Role           Role
	// Hash is the hex SHA-256 of the invitation's secret.
	Hash string
	// InvitedByID and InvitedByName are the inviter's user id and name when they invited.
	InvitedByID   string
	InvitedByName string
	CreatedAt     time.Time
	ExpiresAt     time.Time
}

// Expired reports whether the invitation has expired at time now.
func (i *Invitation) Expired(now time.Time) bool { return !now.Before(i.ExpiresAt) }

// ErrInvitationInvalid is the one answer for a link that cannot be accepted: unknown, used,
// revoked or expired alike, so the answer does not tell which.
func ErrInvitationInvalid() error {
	return Errorf(ENotFound, "this invitation link is not valid: it may have been used, revoked or have expired; ask for a new one")
}
