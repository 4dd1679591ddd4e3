package kiln

import (
	"net/mail"
	"strings"
	"time"
)

// User is a person who uses kiln.
type User struct {
	ID        string
	Email     string
	Name      string
	CreatedAt time.Time
}

// Member is a user's membership of an organization, with the user's details; the email is unique
// within the organization. A user made by an operator or an invitation form belongs to one
// organization; one who signs in with GitHub may belong to several, under one user id.
type Member struct {
	OrganizationID string
	User           User
	Role           Role
	CreatedAt      time.Time
}

// Validate checks the member's user details and role.
func (m *Member) Validate() error {
	errs := FieldErrors{}
	ValidateName("name", m.User.Name, errs)
	if !ValidEmail(m.User.Email) {
		errs.Add("email", "must be an email address such as dev@example.com")
	}
	if !m.Role.Valid() {
		errs.Add("role", "must be one of owner, admin, member, viewer")
	}
	return errs.Err()
}

// ValidEmail reports whether s is a bare email address (no display name).
func ValidEmail(s string) bool {
	if len(s) > 254 || strings.ContainsAny(s, " \t\r\n<>") {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}

// NormalizeEmail is the form in which emails are compared.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// ErrLastOwner is the error of a change that would leave an organization without an owner.
func ErrLastOwner() error {
	return Errorf(EInvalidState, "an organization always keeps at least one owner: make another member owner first")
}
