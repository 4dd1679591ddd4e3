package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/webhooks"
	"github.com/kilnbuild/kiln/shared/webhooks/chat"
)

// WebhookDispatcher redelivers organization webhook deliveries.
type WebhookDispatcher interface {
	Redeliver(ctx context.Context, orgID, webhookID, deliveryID string) (*kiln.WebhookDelivery, error)
}

type webhookBody struct {
	ID string `json:"id"`
	// Format is kiln, slack or discord; a chat webhook's url is shown masked (its URL is the
	// secret).
	Format string   `json:"format"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Active bool     `json:"active"`
	// SignatureHeader is the extra header the signature is also sent under, null for none.
	SignatureHeader *string `json:"signatureHeader"`
	Secret          string  `json:"secret,omitempty"`
	CreatedAt       string  `json:"createdAt"`
	UpdatedAt       string  `json:"updatedAt"`
}

func renderWebhook(h *kiln.Webhook) webhookBody {
	events := make([]string, 0, len(h.Events))
	for _, e := range h.Events {
		events = append(events, string(e))
	}
	return webhookBody{ID: h.ID, Format: string(h.FormatOrKiln()), URL: h.URL, Events: events, Active: h.Active,
		SignatureHeader: nullable(h.SignatureHeader), CreatedAt: timestamp(h.CreatedAt), UpdatedAt: timestamp(h.UpdatedAt)}
}

type deliveryBody struct {
	ID             string  `json:"id"`
	WebhookID      string  `json:"webhookId"`
	Event          string  `json:"event"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	ResponseStatus *int    `json:"responseStatus"`
	Error          *string `json:"error"`
	CreatedAt      string  `json:"createdAt"`
	UpdatedAt      string  `json:"updatedAt"`
}

func renderDelivery(d *kiln.WebhookDelivery) deliveryBody {
	b := deliveryBody{ID: d.ID, WebhookID: d.WebhookID, Event: string(d.Event), Status: string(d.Status), Attempts: d.Attempts,
		Error: nullable(d.Error), CreatedAt: timestamp(d.CreatedAt), UpdatedAt: timestamp(d.UpdatedAt)}
	if d.ResponseStatus != 0 {
		st := d.ResponseStatus
		b.ResponseStatus = &st
	}
	return b
}

type webhookFields struct {
	Format Optional[string]   `json:"format"`
	URL    Optional[string]   `json:"url"`
	Events Optional[[]string] `json:"events"`
	Active Optional[bool]     `json:"active"`
	// SignatureHeader names an extra header for the signature (webhooks.ValidSignatureHeader);
	// null or "" removes it.
	SignatureHeader Optional[string] `json:"signatureHeader"`
}

// applyWebhook merges the fields into h and checks the result. The format is chosen when the
// webhook is made (creating) and never changes. A chat webhook's URL, the service's secret, is
// checked against its service's hosts (or the operator's outbound allow ranges), sealed into
// h.Secret, and only its mask kept in h.URL.
func (s *Server) applyWebhook(f webhookFields, h *kiln.Webhook, creating bool) error {
	errs := kiln.FieldErrors{}
	if f.Format.Set {
		format := kiln.WebhookFormat(f.Format.Value)
		switch {
		case f.Format.Null || !format.Valid():
			errs.Add("format", "must be one of kiln, slack, discord")
		case creating:
			h.Format = format
		case format != h.FormatOrKiln():
			errs.Add("format", "cannot be changed; make a new webhook")
		}
	}
	if creating && h.Format == "" {
		h.Format = kiln.FormatKiln
	}
	format := h.FormatOrKiln()
	if f.URL.Set {
		raw := strings.TrimSpace(f.URL.Value)
		switch {
		case f.URL.Null:
			errs.Add("url", "must not be null")
		case format.Chat():
			if err := chat.CheckURL(format, raw, s.chatAllow); err != nil {
				errs.Add("url", err.Error())
			} else {
				h.URL, h.Secret = chat.Mask(raw), s.sealer.Seal([]byte(raw), webhooks.SecretAD(h.ID))
			}
		default:
			h.URL = raw
		}
	}
	if f.Events.Set {
		h.Events = nil
		for _, e := range f.Events.Value {
			ev := kiln.WebhookEvent(e)
			if !ev.Valid() {
				errs.Add("events", "each event must be one of "+eventNames(kiln.WebhookEvents))
			} else if format.Chat() && !slices.Contains(kiln.ChatEvents, ev) {
				errs.Add("events", "a "+string(format)+" webhook's events must be among "+eventNames(kiln.ChatEvents))
			} else if !slices.Contains(h.Events, ev) {
				h.Events = append(h.Events, ev)
			}
		}
	}
	if f.Active.Set {
		if f.Active.Null {
			errs.Add("active", "must not be null")
		}
		h.Active = f.Active.Value
	}
	applySignatureHeader(f.SignatureHeader, h, format, errs)
	if format.Chat() {
		if len(h.Secret) == 0 && !f.URL.Set {
			errs.Add("url", "is required: the "+string(format)+" incoming-webhook URL")
		}
	} else if u, err := url.Parse(h.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || len(h.URL) > 2048 {
		errs.Add("url", "is required and must be an absolute http or https URL without credentials")
	}
	if len(h.Events) == 0 {
		errs.Add("events", "is required: at least one event")
	}
	return errs.Err()
}

// eventNames lists events as "a, b, c".
func eventNames(events []kiln.WebhookEvent) string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// webhook loads the {webhookId} of the caller's organization named by {id}.
func (s *Server) webhook(r *http.Request, p *auth.Principal) (*kiln.Webhook, error) {
	if _, err := ownOrganization(r, p); err != nil {
		return nil, err
	}
	id := r.PathValue("webhookId")
	if !kiln.ValidID(id) {
		return nil, kiln.NotFound("webhook")
	}
	return s.hooks.GetWebhook(r.Context(), p.Organization.ID, id)
}

// createWebhook answers POST /organizations/:id/webhooks; a kiln webhook's signing secret is
// shown once. An
// organization has at most webhooks.MaxWebhooks (409 invalid_state past it).
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if _, err := ownOrganization(r, p); err != nil {
		return err
	}
	var f webhookFields
	if err := decodeBody(w, r, &f, false); err != nil {
		return err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	h := &kiln.Webhook{ID: kiln.NewID(), OrganizationID: p.Organization.ID, Active: true, CreatedAt: now, UpdatedAt: now}
	if err := s.applyWebhook(f, h, true); err != nil {
		return err
	}
	hooks, err := s.hooks.ListWebhooks(r.Context(), p.Organization.ID)
	if err != nil {
		return err
	}
	if len(hooks) >= webhooks.MaxWebhooks {
		return kiln.Errorf(kiln.EInvalidState, "the organization has %d webhooks, the most allowed; delete one first", webhooks.MaxWebhooks)
	}
	// A kiln webhook's signing secret is shown once; a chat webhook's sealed URL never is.
	var secret string
	if !h.FormatOrKiln().Chat() {
		secret = "whsec_" + rand.Text()[:26] + rand.Text()[:14]
		h.Secret = s.sealer.Seal([]byte(secret), webhooks.SecretAD(h.ID))
	}
	if err := s.hooks.CreateWebhook(r.Context(), h); err != nil {
		return err
	}
	body := renderWebhook(h)
	body.Secret = secret
	writeJSON(w, http.StatusCreated, body)
	return nil
}

// listWebhooks answers GET /organizations/:id/webhooks.
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if _, err := ownOrganization(r, p); err != nil {
		return err
	}
	hooks, err := s.hooks.ListWebhooks(r.Context(), p.Organization.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderList(hooks, nil, renderWebhook))
	return nil
}

// getWebhook answers GET /organizations/:id/webhooks/:webhookId.
func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	h, err := s.webhook(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderWebhook(h))
	return nil
}

// patchWebhook answers PATCH /organizations/:id/webhooks/:webhookId.
func (s *Server) patchWebhook(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	h, err := s.webhook(r, p)
	if err != nil {
		return err
	}
	var f webhookFields
	if err := decodeBody(w, r, &f, false); err != nil {
		return err
	}
	updated := *h
	if err := s.applyWebhook(f, &updated, false); err != nil {
		return err
	}
	updated.UpdatedAt = s.now().UTC().Truncate(time.Millisecond)
	if err := s.hooks.UpdateWebhook(r.Context(), &updated); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderWebhook(&updated))
	return nil
}

// deleteWebhook answers DELETE /organizations/:id/webhooks/:webhookId.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	h, err := s.webhook(r, p)
	if err != nil {
		return err
	}
	if err := s.hooks.DeleteWebhook(r.Context(), p.Organization.ID, h.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listWebhookDeliveries answers GET /organizations/:id/webhooks/:webhookId/deliveries.
func (s *Server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	h, err := s.webhook(r, p)
	if err != nil {
		return err
	}
	return writePage(s, w, r, p.Organization.ID, "webhook-deliveries:"+h.ID, func(ctx context.Context, page store.Page) ([]*kiln.WebhookDelivery, string, error) {
		return s.hooks.ListWebhookDeliveries(ctx, p.Organization.ID, h.ID, page)
	}, renderDelivery)
}

// redeliverWebhook answers POST .../deliveries/:deliveryId/redeliver: a new delivery of the same
// payload; 429 rate_limited with Retry-After while webhooks.MaxQueuedDeliveries of the
// organization's deliveries are pending.
func (s *Server) redeliverWebhook(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	h, err := s.webhook(r, p)
	if err != nil {
		return err
	}
	if err := decodeBody(w, r, &struct{}{}, true); err != nil {
		return err
	}
	id := r.PathValue("deliveryId")
	if !kiln.ValidID(id) || s.webhookSender == nil {
		return kiln.NotFound("delivery")
	}
	d, err := s.webhookSender.Redeliver(r.Context(), p.Organization.ID, h.ID, id)
	if kiln.IsCode(err, kiln.ERateLimited) {
		w.Header().Set("Retry-After", itoa(webhooks.RedeliverRetryAfter))
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, renderDelivery(d))
	return nil
}

// webhookPayload is the envelope of a webhook event.
type webhookPayload struct {
	Type           string         `json:"type"`
	CreatedAt      string         `json:"createdAt"`
	OrganizationID string         `json:"organizationId"`
	Data           webhookPayData `json:"data"`
}

type webhookPayData struct {
	Build   api.WebhookBuild `json:"build"`
	Project *api.ProjectItem `json:"project"`
}

// RenderWebhookEvent makes the body of a webhook event, with the build and its project (null
// once deleted) in the API's own shapes.
func RenderWebhookEvent(get func(ctx context.Context, orgID, projectID string) (*kiln.Project, error)) func(ctx context.Context, event kiln.WebhookEvent, b *kiln.Build, at time.Time) ([]byte, error) {
	return func(ctx context.Context, event kiln.WebhookEvent, b *kiln.Build, at time.Time) ([]byte, error) {
		payload := webhookPayload{Type: string(event), CreatedAt: timestamp(at), OrganizationID: b.OrganizationID,
			Data: webhookPayData{Build: api.WebhookBuild{Build: renderBuild(b)}}}
		if p, err := get(ctx, b.OrganizationID, b.ProjectID); err == nil {
			item := renderProjectItem(p)
			payload.Data.Project = &item
		}
		return json.Marshal(payload)
	}
}
