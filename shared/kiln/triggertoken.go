package kiln

import "time"

// TriggerToken is an organization's secret for Perforce submit triggers (POST /webhooks/perforce).
type TriggerToken struct {
	Credential
	// CreatedBy is the user id of the admin who created the token.
	CreatedBy  string
	LastUsedAt *time.Time
}
