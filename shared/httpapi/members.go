package httpapi

import (
	"net/http"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// memberBody is a member of the organization as every member may see it.
type memberBody struct {
	User      userBody `json:"user"`
	Role      string   `json:"role"`
	CreatedAt string   `json:"createdAt"`
}

func renderMember(m *kiln.Member) memberBody {
	return memberBody{User: userBody{ID: m.User.ID, Email: m.User.Email, Name: m.User.Name}, Role: string(m.Role),
		CreatedAt: timestamp(m.CreatedAt)}
}

// listMembers answers GET /organizations/:id/members: who belongs to the organization, with
// which role (any role may read it; members are managed with kiln admin).
func (s *Server) listMembers(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if _, err := ownOrganization(r, p); err != nil {
		return err
	}
	const query = "members"
	page, err := s.parsePage(r, p.Organization.ID, query)
	if err != nil {
		return err
	}
	members, next, err := s.store.ListMembers(r.Context(), p.Organization.ID, page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderList(members, s.cursors.encode(p.Organization.ID, query, next), renderMember))
	return nil
}
