package httpapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// submitEvent is what a Helix change-commit trigger posts.
type submitEvent struct {
	Stream     *string `json:"stream"`
	Changelist *string `json:"changelist"`
}

// perforceWebhook answers POST /webhooks/perforce: a submit to a stream starts the builds of the
// settings with trigger push on that stream, in the organization whose trigger token (a bearer
// token made by an admin) signs the request. A repeated submit starts nothing new.
func (s *Server) perforceWebhook(w http.ResponseWriter, r *http.Request) {
	if err := s.handlePerforceWebhook(w, r); err != nil {
		writeError(w, r, err)
	}
}

func (s *Server) handlePerforceWebhook(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	tok, err := s.triggerToken(r)
	if err != nil {
		if !s.rateLimit(w, r, "addr:"+clientAddr(r), s.now()) {
			return nil
		}
		return err
	}
	if !s.rateLimit(w, r, "trigger:"+tok.ID, s.now()) {
		return nil
	}
	var ev submitEvent
	if err := decodeBody(w, r, &ev, false); err != nil {
		return err
	}
	errs := kiln.FieldErrors{}
	if ev.Stream == nil || !kiln.ValidDepotPath(*ev.Stream) {
		errs.Add("stream", "is required: the stream submitted to, //<depot>/<stream>")
	}
	if ev.Changelist == nil || !changelistRe.MatchString(*ev.Changelist) {
		errs.Add("changelist", "is required: the submitted changelist number")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := s.credentials.TouchTriggerToken(ctx, tok.OrganizationID, tok.ID, s.now()); err != nil {
		loggerOf(ctx).WarnContext(ctx, "record trigger token use", slog.String("error", err.Error()))
	}
	started, err := s.buildsForSubmit(ctx, tok.OrganizationID, *ev.Stream, *ev.Changelist)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"builds": started})
	return nil
}

// triggerToken resolves the request's bearer trigger token; invalid_token when it is missing,
// malformed, unknown or revoked.
func (s *Server) triggerToken(r *http.Request) (*kiln.TriggerToken, error) {
	secret, ok := bearerToken(r)
	if !ok || !auth.WellFormedTrigger(secret) {
		return nil, kiln.Errorf(kiln.EInvalidToken, "a Perforce trigger token (kilnp4_…) is required as the bearer token")
	}
	tok, err := s.credentials.GetTriggerTokenByHash(r.Context(), auth.HashToken(secret))
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, kiln.Errorf(kiln.EInvalidToken, "the trigger token is not valid or was revoked")
	}
	return tok, err
}

// buildsForSubmit triggers the push settings on the stream in every Perforce project of the
// organization. Each build is keyed by the stream, changelist and setting, so a trigger that
// fires twice for one submit starts nothing new.
func (s *Server) buildsForSubmit(ctx context.Context, orgID, stream, changelist string) ([]string, error) {
	return s.triggerPushSettings(ctx, orgID, kiln.SourcePerforce, nil, func(st *kiln.BuildSetting) *builds.TriggerRequest {
		if st.StreamPath != stream {
			return nil
		}
		return &builds.TriggerRequest{Changelist: changelist, TriggeredBy: "push:" + changelist,
			IdempotencyKey: "perforce-submit:" + stream + "@" + changelist + ":" + st.ID, Fingerprint: changelist}
	})
}
