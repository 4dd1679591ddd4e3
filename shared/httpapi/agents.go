package httpapi

import (
	"context"
	"net/http"

	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// agentBody describes a build agent; its token appears only in the response that creates it.
type agentBody struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Pool       string  `json:"pool"`
	Hint       string  `json:"hint"`
	Token      string  `json:"token,omitempty"`
	CreatedAt  string  `json:"createdAt"`
	RevokedAt  *string `json:"revokedAt"`
	LastSeenAt *string `json:"lastSeenAt"`
}

func renderAgent(a *kiln.Agent) agentBody {
	return agentBody{ID: a.ID, Name: a.Name, Pool: a.Pool, Hint: a.Hint, CreatedAt: timestamp(a.CreatedAt),
		RevokedAt: optionalTimestamp(a.RevokedAt), LastSeenAt: optionalTimestamp(a.LastSeenAt)}
}

type createAgentRequest struct {
	Name *string `json:"name"`
	Pool *string `json:"pool"`
}

// createAgent answers POST /organizations/:id/agents: an agent of the organization in a pool,
// with its token, shown once.
func (s *Server) createAgent(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	var req createAgentRequest
	if err := decodeBody(w, r, &req, true); err != nil {
		return err
	}
	errs := kiln.FieldErrors{}
	name := kiln.CredentialName("name", req.Name, "", errs)
	var pool string
	if req.Pool == nil {
		errs.Add("pool", "required")
	} else {
		pool = *req.Pool
		kiln.ValidatePool("pool", pool, errs)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	secret, a := auth.NewAgent(org.ID, name, pool, s.now())
	if err := s.credentials.CreateAgent(r.Context(), a); err != nil {
		return err
	}
	body := renderAgent(a)
	body.Token = secret
	writeJSON(w, http.StatusCreated, body)
	return nil
}

// listAgents answers GET /organizations/:id/agents, revoked ones included, without tokens.
func (s *Server) listAgents(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	return writePage(s, w, r, org.ID, "agents", func(ctx context.Context, page store.Page) ([]*kiln.Agent, string, error) {
		return s.credentials.ListAgents(ctx, org.ID, page)
	}, renderAgent)
}

// revokeAgent answers DELETE /organizations/:id/agents/:agentId: the token stops working at
// once and the builds the agent holds fail.
func (s *Server) revokeAgent(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	if _, err := agentpool.Revoke(r.Context(), s.agentRevocations, s.builds.Lifecycle, org.ID, r.PathValue("agentId"), s.now(), s.logger); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
