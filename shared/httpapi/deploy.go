package httpapi

import (
	"context"
	"net/http"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Deliveries re-runs auto deploy deliveries.
type Deliveries interface {
	Redeliver(ctx context.Context, orgID, buildID string) (*kiln.Build, error)
}

// deployBuild answers POST /builds/:id/deploy (beyond the contract): deliver a complete build's
// artifact again, to its setting's current uploadBuildUrl. 202 with the build; 403
// plan_limit_reached when the organization's plan has no auto deploy; 409 invalid_state when it
// has no artifact or its setting has auto deploy off; 429 rate_limited with Retry-After while the organization has
// builds.MaxQueuedDeliveries builds waiting for delivery.
func (s *Server) deployBuild(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("build")
	}
	if err := decodeBody(w, r, &struct{}{}, true); err != nil {
		return err
	}
	if s.deliveries == nil {
		return kiln.Errorf(kiln.EInvalidState, "auto deploy is not available on this deployment")
	}
	if err := s.checkAutoDeployPlan(r.Context(), p.Organization.ID); err != nil {
		return err // a plan without auto deploy delivers nothing, whatever its settings say
	}
	b, err := s.deliveries.Redeliver(r.Context(), p.Organization.ID, id)
	if kiln.IsCode(err, kiln.ERateLimited) {
		w.Header().Set("Retry-After", itoa(builds.RedeliverRetryAfter))
	}
	if err != nil {
		return err
	}
	lines, err := s.logLines(r.Context(), b.OrganizationID, b.ID)
	if err != nil {
		return err
	}
	body := api.BuildDetail{Build: renderBuild(b), LogLines: lines}
	if err := s.nameTriggers(r.Context(), b.OrganizationID, &body.Build); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, body)
	return nil
}
