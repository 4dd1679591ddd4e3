package httpapi

import (
	"net/http"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// rerunBuild answers POST /builds/:id/rerun: a new pending build of the same setting, branch
// and commit or changelist as build :id, triggered by the caller (see builds.Service.Rerun),
// 202 with the new build and, as a trigger answers, its id as buildId. An Idempotency-Key works
// as for a trigger.
func (s *Server) rerunBuild(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("build")
	}
	if err := decodeBody(w, r, &struct{}{}, true); err != nil {
		return err
	}
	key := r.Header.Get("Idempotency-Key")
	if !builds.ValidClientKey(key) {
		return fieldError("Idempotency-Key", "must be at most 255 characters on one line")
	}
	b, _, err := s.builds.Rerun(r.Context(), builds.RerunRequest{OrganizationID: p.Organization.ID, BuildID: id,
		TriggeredBy: p.UserRef(), ClientKey: builds.ClientKey{UserID: p.Member.User.ID, Key: key}})
	if err != nil {
		return err
	}
	body := renderBuild(b)
	if err := s.nameTriggers(r.Context(), p.Organization.ID, &body); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, api.RerunAccepted{Build: body, BuildID: body.ID})
	return nil
}
