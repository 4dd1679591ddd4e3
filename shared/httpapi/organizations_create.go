package httpapi

import (
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// maxOwnedOrganizations bounds how many organizations one person may create and own by
// themselves; an operator (`kiln admin`) is not bound by it.
const maxOwnedOrganizations = 10

type createOrganizationRequest struct {
	Name string `json:"name"`
}

// createOrganization answers POST /organizations: a person signed in with GitHub creates an
// organization on the free plan and becomes its owner; their session switches to it. Only where
// sign-up is open (KILN_SIGNUP=github), and only with a console session.
func (s *Server) createOrganization(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if s.signIn == nil {
		return kiln.Errorf(kiln.ENotFound, "creating organizations is off on this service (KILN_SIGNUP); ask its operator")
	}
	if p.Session == nil {
		return kiln.Errorf(kiln.EBadRequest, "create an organization signed in to the console; an API token acts for the organization it was made in")
	}
	var req createOrganizationRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	ctx := r.Context()
	memberships, err := s.users.ListMemberships(ctx, p.Session.UserID)
	if err != nil {
		return err
	}
	owned := 0
	for _, m := range memberships {
		if m.Role == kiln.RoleOwner {
			owned++
		}
	}
	if owned >= maxOwnedOrganizations {
		return kiln.Errorf(kiln.EInvalidState, "you own %d organizations, the most one person may create; ask the service's operator for more", owned)
	}
	u, err := s.users.GetGitHubUser(ctx, p.Session.UserID)
	if err != nil {
		return err
	}
	now := s.now()
	org, err := accounts.CreateOwnedOrganization(ctx, s.orgCreator, req.Name, u.User, kiln.PlanFree, now)
	if err != nil {
		return err
	}
	if _, err := s.users.SetSessionOrganization(ctx, u.ID, p.Session.ID, org.ID); err != nil {
		return err
	}
	s.recordAudit(r, &kiln.AuditEvent{ID: kiln.NewID(), OrganizationID: org.ID, At: now.UTC().Truncate(time.Millisecond), Kind: "organization.created",
		ActorKind: kiln.AuditActorMember, ActorID: u.ID, ActorName: u.Name, ActorEmail: u.Email,
		Address: clientAddr(r), Target: org.ID, Details: map[string]string{"name": org.Name, "plan": string(org.Plan)}})
	writeJSON(w, http.StatusCreated, renderOrganization(org))
	return nil
}
