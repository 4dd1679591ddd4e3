package httpapi

import (
	"net/http"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

type userBody struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

type orgSummaryBody struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
	Plan string `json:"plan"`
}

type membershipBody struct {
	Role string `json:"role"`
}

type meBody struct {
	User         userBody       `json:"user"`
	Organization orgSummaryBody `json:"organization"`
	Membership   membershipBody `json:"membership"`
}

func orgSummary(o *kiln.Organization) orgSummaryBody {
	return orgSummaryBody{ID: o.ID, Name: o.Name, Slug: o.Slug, Plan: string(o.Plan)}
}

// getMe answers GET /auth/me: who the token belongs to.
func (s *Server) getMe(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	u := p.Member.User
	writeJSON(w, http.StatusOK, meBody{
		User:         userBody{ID: u.ID, Email: u.Email, Name: u.Name},
		Organization: orgSummary(p.Organization),
		Membership:   membershipBody{Role: string(p.Member.Role)},
	})
	return nil
}
