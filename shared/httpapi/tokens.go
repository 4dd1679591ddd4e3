package httpapi

import (
	"context"
	"net/http"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// tokenBody describes a token; the secret appears only in the response that creates it.
type tokenBody struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Hint      string  `json:"hint"`
	Token     string  `json:"token,omitempty"`
	CreatedAt string  `json:"createdAt"`
	ExpiresAt *string `json:"expiresAt"`
}

func renderToken(t *kiln.Token) tokenBody {
	return tokenBody{ID: t.ID, Name: t.Name, Hint: t.Hint, CreatedAt: timestamp(t.CreatedAt),
		ExpiresAt: optionalTimestamp(t.ExpiresAt)}
}

type createTokenRequest struct {
	Name          *string `json:"name"`
	ExpiresInDays *int    `json:"expiresInDays"`
}

// createToken answers POST /auth/tokens: a new token for the caller, shown once.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var req createTokenRequest
	if err := decodeBody(w, r, &req, true); err != nil {
		return err
	}
	errs := kiln.FieldErrors{}
	name := kiln.CredentialName("name", req.Name, "api", errs)
	ttl := auth.TokenLifetime("expiresInDays", req.ExpiresInDays, errs)
	if err := errs.Err(); err != nil {
		return err
	}
	secret, tok, err := auth.IssueToken(r.Context(), s.credentials, p, name, ttl, s.now())
	if err != nil {
		return err
	}
	body := renderToken(tok)
	body.Token = secret
	writeJSON(w, http.StatusCreated, body)
	return nil
}

// listTokens answers GET /auth/tokens: the caller's own tokens, without secrets.
func (s *Server) listTokens(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	orgID, userID := p.Organization.ID, p.Member.User.ID
	return writePage(s, w, r, orgID, "tokens:"+userID, func(ctx context.Context, page store.Page) ([]*kiln.Token, string, error) {
		return s.credentials.ListTokens(ctx, orgID, userID, page)
	}, renderToken)
}

// deleteToken answers DELETE /auth/tokens/:id: revokes one of the caller's tokens.
func (s *Server) deleteToken(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("token")
	}
	if err := s.credentials.DeleteToken(r.Context(), p.Organization.ID, p.Member.User.ID, id); err != nil {
		return err
	}
	s.auth.ForgetUser(p.Organization.ID, p.Member.User.ID) // with the tokens created from it
	s.recheckSockets(r.Context(), p.Organization.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
