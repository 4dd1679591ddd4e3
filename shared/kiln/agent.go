package kiln

import (
	"regexp"
	"strings"
	"time"
)

// Agent is a machine of an organization's own that runs its builds (`kiln agent`): it claims
// pending builds of its organization in its pool. Its credential's secret is the agent's token. A
// revoked agent keeps its record (for the list) but its token works no more.
type Agent struct {
	Credential
	// Pool is the pool the agent takes builds of (a build setting's agentPool).
	Pool       string
	RevokedAt  *time.Time
	LastSeenAt *time.Time
	// Hosted marks one of kiln's own build hosts (an EC2 instance of the hosted pool, ID its
	// instance id): never stored, made for each claim from the instance's verified identity. It
	// takes builds of any organization, of its reserved pool only, and one build ever.
	Hosted bool
}

// Revoked reports whether the agent's token was revoked.
func (a *Agent) Revoked() bool { return a.RevokedAt != nil }

// AgentHost is the host a build claimed by agent id is held by (kiln.Build.Host).
func AgentHost(agentID string) string { return "agent:" + agentID }

// HostedHostPrefix starts the Host of a build claimed by one of kiln's own hosts:
// "ec2:<instance id>".
const HostedHostPrefix = "ec2:"

// BuildHost is the host a build this agent claims is held by (kiln.Build.Host).
func (a *Agent) BuildHost() string {
	if a.Hosted {
		return HostedHostPrefix + a.ID
	}
	return AgentHost(a.ID)
}

// HostedPoolWin64 is kiln's own pool of Windows hosts (the AWS deployment's EC2 Windows hosts):
// a Win64 build without an agentPool waits in it when the deployment runs them.
const HostedPoolWin64 = "kiln-hosted-win64"

// HostedPoolLinux is kiln's own pool of Linux hosts (the AWS deployment's EC2 Linux hosts, whose
// AMI holds some engine versions): a Linux build of one of those versions without an agentPool
// waits in it when the deployment runs them.
const HostedPoolLinux = "kiln-hosted-linux"

// HostedPool is kiln's own pool of hosts of a platform ("": kiln hosts none of that platform).
func HostedPool(p Platform) string {
	switch p {
	case PlatformWin64:
		return HostedPoolWin64
	case PlatformLinux:
		return HostedPoolLinux
	}
	return ""
}

// reservedPoolPrefix starts the pools that are kiln's own: no organization's agent or build
// setting may name one.
const reservedPoolPrefix = "kiln-"

// ReservedPool reports whether pool is one of kiln's own pools.
func ReservedPool(pool string) bool { return strings.HasPrefix(pool, reservedPoolPrefix) }

var poolPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// ValidatePool checks an agent pool's name: lower-case letters, digits, '.', '_' and '-', starting
// with a letter or digit, at most 63 characters.
func ValidatePool(field, pool string, errs FieldErrors) {
	if !poolPattern.MatchString(pool) {
		errs.Add(field, "a pool is 1 to 63 of a-z, 0-9, '.', '_', '-', starting with a letter or digit")
		return
	}
	if ReservedPool(pool) {
		errs.Add(field, "pools starting with "+reservedPoolPrefix+" are kiln's own; leave agentPool empty for kiln's hosted hosts")
	}
}
