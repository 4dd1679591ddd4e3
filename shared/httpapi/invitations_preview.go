package httpapi

import (
	"net/http"

	"github.com/kilnbuild/kiln/shared/api"
)

type previewInvitationRequest struct {
	Secret string `json:"secret"`
}

// previewInvitation answers POST /invitations/preview, without a token: what the invitation a
// secret opens is (its organization, who invited, the invited email and role, until when), so
// that the accept page says it before anyone joins. The secret stays the authorization: it comes
// in the body (never a URL, so never a log), and every request takes from the client address's
// budget of failed sign-ins, as accepting does; a secret that is unknown, used, revoked or expired
// gets the one not_found answer.
func (s *Server) previewInvitation(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	if !s.rateLimit(w, r, "addr:"+clientAddr(r), now) {
		return
	}
	var req previewInvitationRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		writeError(w, r, err)
		return
	}
	inv, org, err := s.pendingInvitation(r, req.Secret, now)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.InvitationPreview{
		Organization: api.InvitationOrganization{Name: org.Name},
		Email:        inv.Email, Role: string(inv.Role),
		InvitedBy: api.InvitedBy{ID: inv.InvitedByID, Name: inv.InvitedByName},
		ExpiresAt: timestamp(inv.ExpiresAt),
	})
}
