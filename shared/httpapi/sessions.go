package httpapi

import (
	"net/http"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func renderSession(s *kiln.Session, currentID string) api.Session {
	b := api.Session{ID: s.ID, CreatedAt: timestamp(s.CreatedAt), ExpiresAt: timestamp(s.ExpiresAt),
		UserAgent: s.UserAgent, Address: s.Address, Current: s.ID == currentID}
	if s.OrganizationID != "" {
		b.OrganizationID = &s.OrganizationID
	}
	return b
}

func currentSessionID(p *auth.Principal) string {
	if p.Session == nil {
		return ""
	}
	return p.Session.ID
}

// listSessions answers GET /auth/sessions: the caller's console sessions that have not expired,
// newest first, the one in use marked current.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	list, err := s.users.ListSessions(r.Context(), p.Member.User.ID, s.now())
	if err != nil {
		return err
	}
	current := currentSessionID(p)
	writeJSON(w, http.StatusOK, renderList(list, nil, func(x *kiln.Session) api.Session { return renderSession(x, current) }))
	return nil
}

// deleteSession answers DELETE /auth/sessions/:id: signs one of the caller's sessions out (the
// current one: signing out). It stops working at once.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("session")
	}
	if err := s.users.DeleteSession(r.Context(), p.Member.User.ID, id); err != nil {
		return err
	}
	if p.Organization != nil {
		s.recheckSockets(r.Context(), p.Organization.ID)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type switchOrganizationRequest struct {
	OrganizationID string `json:"organizationId"`
}

// switchOrganization answers PUT /auth/session/organization: the caller's session acts for
// another organization they belong to from now on. An API token acts for the organization it was
// made in, always.
func (s *Server) switchOrganization(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if p.Session == nil {
		return kiln.Errorf(kiln.EBadRequest, "an API token acts for the organization it was made in; only a console session switches")
	}
	var req switchOrganizationRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	if !kiln.ValidID(req.OrganizationID) {
		return fieldError("organizationId", "must be the id of an organization you belong to")
	}
	ctx := r.Context()
	m, err := s.orgs.GetMember(ctx, req.OrganizationID, p.Member.User.ID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return kiln.NotFound("organization")
	}
	if err != nil {
		return err
	}
	org, err := s.orgs.GetOrganization(ctx, req.OrganizationID)
	if err != nil {
		return err
	}
	sess, err := s.users.SetSessionOrganization(ctx, p.Member.User.ID, p.Session.ID, org.ID)
	if err != nil {
		return err
	}
	if p.Organization != nil && p.Organization.ID != org.ID {
		s.recheckSockets(ctx, p.Organization.ID) // the session's sockets leave the organization it left
	}
	return s.writeMe(w, r, &auth.Principal{Organization: org, Member: m, Session: sess}, http.StatusOK)
}
