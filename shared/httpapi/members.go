package httpapi

import (
	"context"
	"net/http"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
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
	return writePage(s, w, r, p.Organization.ID, "members", func(ctx context.Context, page store.Page) ([]*kiln.Member, string, error) {
		return s.orgs.ListMembers(ctx, p.Organization.ID, page)
	}, renderMember)
}
