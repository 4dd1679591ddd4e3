package kiln

import (
	"strings"
	"time"
)

// Credential is what an API token, a Perforce trigger token and an agent have in common: a named
// secret of an organization. Only the SHA-256 of the secret is kept; the secret is shown once,
// when the credential is made.
type Credential struct {
	ID             string
	OrganizationID string
	Name           string
	// Hash is the hex SHA-256 of the whole secret.
	Hash string
	// Hint is the start of the secret ("kiln_AbC1"), enough for a person to tell credentials apart.
	Hint      string
	CreatedAt time.Time
}

// CredentialName is the name asked for a new credential, trimmed and checked into errs: given when
// the request has one, else fallback; a credential without a fallback must be given a name.
func CredentialName(field string, given *string, fallback string, errs FieldErrors) string {
	if given == nil {
		if fallback == "" {
			errs.Add(field, "required")
		}
		return fallback
	}
	name := strings.TrimSpace(*given)
	ValidateName(field, name, errs)
	return name
}
