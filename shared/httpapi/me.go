package httpapi

import (
	"context"
	"net/http"
	"slices"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func orgSummary(o *kiln.Organization) api.OrganizationSummary {
	return api.OrganizationSummary{ID: o.ID, Name: o.Name, Slug: o.Slug, Plan: string(o.Plan)}
}

// getMe answers GET /auth/me: who the token or session belongs to, what it acts for, and the
// organizations the user may switch to.
func (s *Server) getMe(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	return s.writeMe(w, r, p, http.StatusOK)
}

func (s *Server) writeMe(w http.ResponseWriter, r *http.Request, p *auth.Principal, status int) error {
	body, err := s.me(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, status, body)
	return nil
}

// me describes the caller p as GET /auth/me answers.
func (s *Server) me(ctx context.Context, p *auth.Principal) (api.Me, error) {
	belongs, err := s.belongsTo(ctx, p.Member.User.ID)
	if err != nil {
		return api.Me{}, err
	}
	u := p.Member.User
	body := api.Me{User: api.User{ID: u.ID, Email: u.Email, Name: u.Name}, Organizations: belongs}
	if p.Organization != nil {
		o := orgSummary(p.Organization)
		body.Organization, body.Membership = &o, &api.Membership{Role: string(p.Member.Role)}
		// The list is read from an index that may lag a moment behind (DynamoDB's GSI) or, for
		// members made before it, lack them: what the caller acts for is always in it.
		if !slices.ContainsFunc(belongs, func(b api.Belonging) bool { return b.ID == o.ID }) {
			body.Organizations = append([]api.Belonging{{OrganizationSummary: o, Role: string(p.Member.Role)}}, belongs...)
		}
	}
	if p.Session != nil {
		sb := renderSession(p.Session, p.Session.ID)
		body.Session = &sb
	}
	return body, nil
}

// belongsTo lists the organizations a user belongs to, oldest membership first. An organization
// that cannot be read (deleted meanwhile) is left out.
func (s *Server) belongsTo(ctx context.Context, userID string) ([]api.Belonging, error) {
	ms, err := s.users.ListMemberships(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]api.Belonging, 0, len(ms))
	for _, m := range ms {
		org, err := s.orgs.GetOrganization(ctx, m.OrganizationID)
		if kiln.IsCode(err, kiln.ENotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, api.Belonging{OrganizationSummary: orgSummary(org), Role: string(m.Role)})
	}
	return out, nil
}
