package httpapi

import (
	"context"
	"net/http"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// triggerTokenBody describes a Perforce trigger token; the secret appears only in the response
// that creates it.
type triggerTokenBody struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Hint       string  `json:"hint"`
	Token      string  `json:"token,omitempty"`
	CreatedBy  string  `json:"createdBy"`
	CreatedAt  string  `json:"createdAt"`
	LastUsedAt *string `json:"lastUsedAt"`
}

func renderTriggerToken(t *kiln.TriggerToken) triggerTokenBody {
	return triggerTokenBody{ID: t.ID, Name: t.Name, Hint: t.Hint, CreatedBy: t.CreatedBy,
		CreatedAt: timestamp(t.CreatedAt), LastUsedAt: optionalTimestamp(t.LastUsedAt)}
}

type createTriggerTokenRequest struct {
	Name *string `json:"name"`
}

// createTriggerToken answers POST /organizations/:id/perforce/trigger-tokens: a token for the
// organization's Helix submit trigger, shown once.
func (s *Server) createTriggerToken(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	var req createTriggerTokenRequest
	if err := decodeBody(w, r, &req, true); err != nil {
		return err
	}
	errs := kiln.FieldErrors{}
	name := kiln.CredentialName("name", req.Name, "perforce trigger", errs)
	if err := errs.Err(); err != nil {
		return err
	}
	secret, tok := auth.NewTriggerToken(org.ID, p.Member.User.ID, name, s.now())
	if err := s.credentials.CreateTriggerToken(r.Context(), tok); err != nil {
		return err
	}
	body := renderTriggerToken(tok)
	body.Token = secret
	writeJSON(w, http.StatusCreated, body)
	return nil
}

// listTriggerTokens answers GET /organizations/:id/perforce/trigger-tokens, without secrets.
func (s *Server) listTriggerTokens(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	return writePage(s, w, r, org.ID, "trigger-tokens", func(ctx context.Context, page store.Page) ([]*kiln.TriggerToken, string, error) {
		return s.credentials.ListTriggerTokens(ctx, org.ID, page)
	}, renderTriggerToken)
}

// deleteTriggerToken answers DELETE /organizations/:id/perforce/trigger-tokens/:tokenId: the
// token stops working at once.
func (s *Server) deleteTriggerToken(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	if err := s.credentials.DeleteTriggerToken(r.Context(), org.ID, r.PathValue("tokenId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
