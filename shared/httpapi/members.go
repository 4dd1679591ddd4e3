package httpapi

import (
	"context"
	"net/http"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func renderMember(m *kiln.Member) api.Member {
	return api.Member{User: api.User{ID: m.User.ID, Email: m.User.Email, Name: m.User.Name}, Role: string(m.Role),
		CreatedAt: timestamp(m.CreatedAt)}
}

// listMembers answers GET /organizations/:id/members: who belongs to the organization, with
// which role (any role may read it; members are managed with kiln admin).
func (s *Server) listMembers(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if _, err := ownOrganization(r, p); err != nil {
		return err
	}
	return writePage(s, w, r, p.Organization.ID, "members", func(ctx context.Context, page store.Page) ([]*kiln.Member, string, error) {
		return s.orgs.ListMembers(ctx, p.Organization.ID, page)
	}, renderMember)
}

// memberPatch is the body of PATCH /organizations/:id/members/:userId.
type memberPatch struct {
	Role string `json:"role"`
}

// patchMember answers PATCH /organizations/:id/members/:userId: an owner or admin changes a
// member's role (kiln.MayChangeMember); the last owner cannot be demoted. The member's cached
// tokens are forgotten, so the new role applies at once.
func (s *Server) patchMember(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	target, err := s.memberToChange(r, p)
	if err != nil {
		return err
	}
	var patch memberPatch
	if err := decodeBody(w, r, &patch, false); err != nil {
		return err
	}
	if patch.Role == "" {
		return fieldError("role", "is required")
	}
	if err := kiln.MayChangeMember(p.Member.Role, target.Role, kiln.Role(patch.Role)); err != nil {
		return err
	}
	if target.Role == kiln.Role(patch.Role) {
		noteAuditUnchanged(r)
	}
	noteAudit(r, "from", string(target.Role))
	noteAudit(r, "member", target.User.Email)
	m, err := s.members.SetMemberRole(r.Context(), p.Organization.ID, target.User.ID, kiln.Role(patch.Role))
	if err != nil {
		return err
	}
	s.auth.ForgetUser(p.Organization.ID, m.User.ID)
	s.recheckSockets(r.Context(), p.Organization.ID)
	writeJSON(w, http.StatusOK, renderMember(m))
	return nil
}

// removeMember answers DELETE /organizations/:id/members/:userId: an owner or admin removes a
// member (kiln.MayChangeMember). Every token the member holds in the organization is revoked with
// the membership; the last owner cannot be removed.
func (s *Server) removeMember(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	target, err := s.memberToChange(r, p)
	if err != nil {
		return err
	}
	if err := kiln.MayChangeMember(p.Member.Role, target.Role, ""); err != nil {
		return err
	}
	noteAudit(r, "member", target.User.Email)
	noteAudit(r, "role", string(target.Role))
	return s.endMembership(w, r, p.Organization.ID, target.User.ID)
}

// leaveOrganization answers DELETE /organizations/:id/membership: the caller leaves, and their
// tokens in the organization are revoked; the last owner cannot leave.
func (s *Server) leaveOrganization(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if _, err := ownOrganization(r, p); err != nil {
		return err
	}
	noteAuditTarget(r, p.Member.User.ID)
	if err := s.endMembership(w, r, p.Organization.ID, p.Member.User.ID); err != nil {
		return err
	}
	if p.Session != nil { // the session stays signed in, for no organization until it switches
		if _, err := s.users.SetSessionOrganization(r.Context(), p.Member.User.ID, p.Session.ID, ""); err != nil {
			s.logger.WarnContext(r.Context(), "leave: session keeps the organization it left", "session", p.Session.ID, "err", err)
		}
	}
	return nil
}

func (s *Server) endMembership(w http.ResponseWriter, r *http.Request, orgID, userID string) error {
	if err := s.members.RemoveMember(r.Context(), orgID, userID); err != nil {
		return err
	}
	s.auth.ForgetUser(orgID, userID)
	s.recheckSockets(r.Context(), orgID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// memberToChange reads the member a request names, in the caller's organization.
func (s *Server) memberToChange(r *http.Request, p *auth.Principal) (*kiln.Member, error) {
	if _, err := ownOrganization(r, p); err != nil {
		return nil, err
	}
	id := r.PathValue("userId")
	if !kiln.ValidID(id) {
		return nil, kiln.NotFound("member")
	}
	return s.orgs.GetMember(r.Context(), p.Organization.ID, id)
}
