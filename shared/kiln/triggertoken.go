package kiln

import "time"

// TriggerToken is an organization's secret for Perforce submit triggers (POST /webhooks/perforce).
// Only its SHA-256 is kept; the secret is shown once, when it is created.
type TriggerToken struct {
	ID             string
	OrganizationID string
	Name           string
	// Hash is the hex SHA-256 of the whole secret.
	Hash string
	// Hint is the start of the secret, enough for a person to tell tokens apart.
	Hint string
	// CreatedBy is the user id of the admin who created the token.
	CreatedBy  string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}
