package kiln

import "time"

// HostedHost is the record of one of kiln's own build hosts (an EC2 instance of the hosted
// Windows pool): when the service first saw it in service, and the one build it claimed. An
// instance claims at most one build, ever: its identity document never changes and any process
// on it (the tenant's build too) can read it, so a second claim is refused.
type HostedHost struct {
	// ID is the EC2 instance id.
	ID string
	// SeenAt is when the service first saw the instance in service (the schedule's tick or its
	// claim, whichever came first): its idle time counts from there.
	SeenAt time.Time
	// ClaimedAt is when it claimed its build, or was retired without one; nil while it may
	// still claim.
	ClaimedAt *time.Time
	// OrganizationID and BuildID name the build it claimed; "" for a host retired unclaimed
	// (idle for too long).
	OrganizationID string
	BuildID        string
}

// Claimed reports whether the host claimed its build (or was retired): it may claim no more.
func (h *HostedHost) Claimed() bool { return h.ClaimedAt != nil }
