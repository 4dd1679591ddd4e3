package kiln

import "slices"

// Role is a member's role in an organization.
type Role string

const (
	RoleOwner  Role = "owner"
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
	RoleViewer Role = "viewer"
)

// Roles lists every role, strongest first.
var Roles = []Role{RoleOwner, RoleAdmin, RoleMember, RoleViewer}

func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// Action is something a caller may or may not do. The role matrix below is the one place that
// decides.
type Action string

const (
	// ActRead: read projects, build settings, builds, logs; download artifacts; read the
	// organization; manage one's own API tokens.
	ActRead Action = "read"
	// ActWrite: create and edit projects and build settings; trigger and cancel builds.
	ActWrite Action = "write"
	// ActAdmin: edit the organization, connect and disconnect integrations, save Perforce
	// credentials, manage members.
	ActAdmin Action = "admin"
	// ActOwn: manage billing and delete the organization.
	ActOwn Action = "own"
)

// roleMatrix lists, for each action, the roles that may do it (docs/api.md).
var roleMatrix = map[Action][]Role{
	ActRead:  {RoleOwner, RoleAdmin, RoleMember, RoleViewer},
	ActWrite: {RoleOwner, RoleAdmin, RoleMember},
	ActAdmin: {RoleOwner, RoleAdmin},
	ActOwn:   {RoleOwner},
}

// Allows reports whether a member with role r may do a.
func (r Role) Allows(a Action) bool { return slices.Contains(roleMatrix[a], r) }
