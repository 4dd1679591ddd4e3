package api

// User is a user as members of their organizations see them.
type User struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

// OrganizationSummary is an organization in GET /auth/me.
type OrganizationSummary struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
	Plan string `json:"plan"`
}

// Membership is the caller's role in the organization they act for.
type Membership struct {
	Role string `json:"role"`
}

// Belonging is one of the organizations a user belongs to, with their role in it.
type Belonging struct {
	OrganizationSummary
	Role string `json:"role"`
}

// Me is the answer of GET /auth/me: who the token or session belongs to, what it acts for, and
// the organizations the user may switch to.
type Me struct {
	User User `json:"user"`
	// Organization and Membership are what the token or session acts for: null for a session
	// that acts for no organization yet.
	Organization *OrganizationSummary `json:"organization"`
	Membership   *Membership          `json:"membership"`
	// Organizations are all the organizations the user belongs to.
	Organizations []Belonging `json:"organizations"`
	// Session is the console session the request was made with, or null for an API token.
	Session *Session `json:"session"`
}

// Session is a console session, never its secret. OrganizationID is null for a session that
// acts for no organization; Current is true for the session the request was made with.
type Session struct {
	ID             string  `json:"id"`
	OrganizationID *string `json:"organizationId"`
	CreatedAt      string  `json:"createdAt"`
	ExpiresAt      string  `json:"expiresAt"`
	UserAgent      string  `json:"userAgent"`
	Address        string  `json:"address"`
	Current        bool    `json:"current"`
}

// Member is a member of the organization as every member may see it.
type Member struct {
	User      User   `json:"user"`
	Role      string `json:"role"`
	CreatedAt string `json:"createdAt"`
}

// Invitation is a pending invitation to the organization. Link (and whether it was Mailed) is
// only in the answer that creates it (schema CreatedInvitation).
type Invitation struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	InvitedBy InvitedBy `json:"invitedBy"`
	CreatedAt string    `json:"createdAt"`
	ExpiresAt string    `json:"expiresAt"`
	Link      string    `json:"link,omitempty"`
	Mailed    *bool     `json:"mailed,omitempty"`
}

// InvitationPreview is what a pending invitation is, for the person holding its secret (POST
// /invitations/preview): the organization, the invited email and role, who invited, until when.
type InvitationPreview struct {
	Organization InvitationOrganization `json:"organization"`
	Email        string                 `json:"email"`
	Role         string                 `json:"role"`
	InvitedBy    InvitedBy              `json:"invitedBy"`
	ExpiresAt    string                 `json:"expiresAt"`
}

// InvitationOrganization names the organization an invitation is to.
type InvitationOrganization struct {
	Name string `json:"name"`
}

// InvitedBy is who invited, as they were named then.
type InvitedBy struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}
