package kiln

import (
	"strings"
	"time"
)

// AuditEvent is one change to an organization, for its audit log: who made it, when, from which
// address and what changed. Details never hold a secret (a token, a ticket, a webhook URL or
// secret): only names, ids, roles and which fields were set.
type AuditEvent struct {
	ID             string
	OrganizationID string
	At             time.Time
	// Kind is "<category>.<what happened>", for example "member.removed"; AuditKinds lists them.
	Kind string
	// Actor is who made the change: a member (ActorID their user id), or the service's operator
	// (ActorKind "operator", through kiln admin), or GitHub (ActorKind "github").
	ActorKind  string
	ActorID    string
	ActorName  string
	ActorEmail string
	// Address is the client address of the request ("" for an operator's command).
	Address string
	// Target is the id of what changed (a member's user id, a webhook's id…), "" for the
	// organization itself.
	Target  string
	Details map[string]string
}

// Actor kinds of audit events.
const (
	AuditActorMember   = "member"
	AuditActorOperator = "operator"
	AuditActorGitHub   = "github"
)

// AuditRetention is how long an organization's audit log keeps an event.
const AuditRetention = 365 * 24 * time.Hour

// Category is the part of the kind before its dot: "member" for "member.removed".
func (e *AuditEvent) Category() string { return AuditCategory(e.Kind) }

// AuditCategory is the category of an event kind.
func AuditCategory(kind string) string {
	c, _, _ := strings.Cut(kind, ".")
	return c
}

// AuditFilter narrows an audit log: by the actor's user id, and by a kind ("member.removed") or
// a whole category ("member").
type AuditFilter struct {
	ActorID string
	Kind    string
}

// ByCategory reports whether the filter's Kind names a category rather than one kind.
func (f AuditFilter) ByCategory() bool { return f.Kind != "" && !strings.Contains(f.Kind, ".") }
