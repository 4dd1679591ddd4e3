package kiln

import (
	"regexp"
	"time"
)

// Agent is a machine of an organization's own that runs its builds (`kiln agent`): it claims
// pending builds of its organization in its pool. Only the SHA-256 of its token is kept; the token
// is shown once, when the agent is created. A revoked agent keeps its record (for the list) but
// its token works no more.
type Agent struct {
	ID             string
	OrganizationID string
	Name           string
	// Pool is the pool the agent takes builds of (a build setting's agentPool).
	Pool string
	// Hash is the hex SHA-256 of the whole token; Hint the token's start.
	Hash       string
	Hint       string
	CreatedAt  time.Time
	RevokedAt  *time.Time
	LastSeenAt *time.Time
}

// Revoked reports whether the agent's token was revoked.
func (a *Agent) Revoked() bool { return a.RevokedAt != nil }

// AgentHost is the host a build claimed by agent id is held by (kiln.Build.Host).
func AgentHost(agentID string) string { return "agent:" + agentID }

var poolPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// ValidatePool checks an agent pool's name: lower-case letters, digits, '.', '_' and '-', starting
// with a letter or digit, at most 63 characters.
func ValidatePool(field, pool string, errs FieldErrors) {
	if !poolPattern.MatchString(pool) {
		errs.Add(field, "a pool is 1 to 63 of a-z, 0-9, '.', '_', '-', starting with a letter or digit")
	}
}
