package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/console"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/notify"
	"github.com/kilnbuild/kiln/shared/store"
)

// invitationStore is the organization's invitations.
type invitationStore interface {
	CreateInvitation(ctx context.Context, inv *kiln.Invitation) error
	GetInvitationByHash(ctx context.Context, hash string) (*kiln.Invitation, error)
	ListInvitations(ctx context.Context, orgID string, p store.Page) ([]*kiln.Invitation, string, error)
	DeleteInvitation(ctx context.Context, orgID, id string) error
	AcceptInvitation(ctx context.Context, inv *kiln.Invitation, now time.Time, m *kiln.Member, token *kiln.Token) error
}

// Mailer sends email (notify.SMTP); the API mails invitation links with it.
type Mailer interface {
	Send(ctx context.Context, m notify.Message) error
}

// invitationAcceptPath is the console page an invitation link opens; the secret follows in the
// URL's fragment, which browsers never send to a server.
const invitationAcceptPath = console.Prefix + "invitations/accept"

type invitedByBody struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// invitationBody is a pending invitation; the link (and whether it was mailed) appears only in
// the response that creates it.
type invitationBody struct {
	ID        string        `json:"id"`
	Email     string        `json:"email"`
	Role      string        `json:"role"`
	InvitedBy invitedByBody `json:"invitedBy"`
	CreatedAt string        `json:"createdAt"`
	ExpiresAt string        `json:"expiresAt"`
	Link      string        `json:"link,omitempty"`
	Mailed    *bool         `json:"mailed,omitempty"`
}

func renderInvitation(inv *kiln.Invitation) invitationBody {
	return invitationBody{ID: inv.ID, Email: inv.Email, Role: string(inv.Role),
		InvitedBy: invitedByBody{ID: inv.InvitedByID, Name: inv.InvitedByName},
		CreatedAt: timestamp(inv.CreatedAt), ExpiresAt: timestamp(inv.ExpiresAt)}
}

type createInvitationRequest struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

// createInvitation answers POST /organizations/:id/invitations: an owner or admin invites a
// person by email with a role (only an owner invites an owner). The link is shown once and, when
// mail is configured, mailed to the person. A new invitation for an email replaces the pending
// one, whose link stops working.
func (s *Server) createInvitation(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	var req createInvitationRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	errs := kiln.FieldErrors{}
	if email := strings.TrimSpace(req.Email); !kiln.ValidEmail(email) {
		errs.Add("email", "must be an email address such as dev@example.com")
	}
	if !kiln.Role(req.Role).Valid() {
		errs.Add("role", "must be one of owner, admin, member, viewer")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := kiln.MayChangeMember(p.Member.Role, "", kiln.Role(req.Role)); err != nil {
		return err
	}
	secret, inv := auth.NewInvitation(org.ID, req.Email, kiln.Role(req.Role), p.Member.User, s.now())
	if err := s.invites.CreateInvitation(r.Context(), inv); err != nil {
		return err
	}
	body := renderInvitation(inv)
	body.Link = strings.TrimRight(s.publicURL, "/") + invitationAcceptPath + "#" + secret
	mailed := s.mailInvitation(r.Context(), inv, org, body.Link)
	body.Mailed = &mailed
	writeJSON(w, http.StatusCreated, body)
	return nil
}

// mailInvitation sends the link to the invited person, when mail is configured; a failure is
// logged (without the link) and the inviter passes the link on instead.
func (s *Server) mailInvitation(ctx context.Context, inv *kiln.Invitation, org *kiln.Organization, link string) bool {
	if s.mail == nil {
		return false
	}
	if err := s.mail.Send(ctx, notify.Invitation(inv, org, link)); err != nil {
		s.logger.WarnContext(ctx, "mail the invitation", slog.String("invitation_id", inv.ID), slog.String("error", err.Error()))
		return false
	}
	return true
}

// listInvitations answers GET /organizations/:id/invitations: the invitations not yet accepted
// or revoked, expired ones included, newest first, without their links.
func (s *Server) listInvitations(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	return writePage(s, w, r, org.ID, "invitations", func(ctx context.Context, page store.Page) ([]*kiln.Invitation, string, error) {
		return s.invites.ListInvitations(ctx, org.ID, page)
	}, renderInvitation)
}

// revokeInvitation answers DELETE /organizations/:id/invitations/:invitationId: the link stops
// working at once.
func (s *Server) revokeInvitation(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	id := r.PathValue("invitationId")
	if !kiln.ValidID(id) {
		return kiln.NotFound("invitation")
	}
	if err := s.invites.DeleteInvitation(r.Context(), org.ID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type acceptInvitationRequest struct {
	Secret string `json:"secret"`
	Name   string `json:"name"`
}

type acceptedBody struct {
	meBody
	Token string `json:"token"`
}

// acceptInvitation answers POST /invitations/accept, without a token: the invitation's secret
// and the person's name make them a member with the invited email and role, and a first API
// token, shown once. Every attempt takes from the client address's budget of failed sign-ins,
// so secrets cannot be guessed fast; a secret that is unknown, used, revoked or expired gets one
// answer that does not say which.
func (s *Server) acceptInvitation(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	if !s.rateLimit(w, r, "addr:"+clientAddr(r), now) {
		return
	}
	if err := s.accept(w, r, now); err != nil {
		writeError(w, r, err)
	}
}

func (s *Server) accept(w http.ResponseWriter, r *http.Request, now time.Time) error {
	var req acceptInvitationRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	errs := kiln.FieldErrors{}
	if req.Secret == "" {
		errs.Add("secret", "is required")
	}
	kiln.ValidateName("name", strings.TrimSpace(req.Name), errs)
	if err := errs.Err(); err != nil {
		return err
	}
	if !auth.WellFormedInvitation(req.Secret) {
		return kiln.ErrInvitationInvalid()
	}
	inv, err := s.invites.GetInvitationByHash(r.Context(), auth.HashToken(req.Secret))
	if kiln.IsCode(err, kiln.ENotFound) || err == nil && inv.Expired(now) {
		return kiln.ErrInvitationInvalid()
	}
	if err != nil {
		return err
	}
	org, err := s.orgs.GetOrganization(r.Context(), inv.OrganizationID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return kiln.ErrInvitationInvalid()
	}
	if err != nil {
		return err
	}
	m, secret, tok := accounts.NewMember(org.ID, inv.Email, req.Name, inv.Role, now)
	if err := m.Validate(); err != nil {
		return err
	}
	if err := s.invites.AcceptInvitation(r.Context(), inv, now, m, tok); err != nil {
		return err
	}
	s.recordAudit(r, &kiln.AuditEvent{ID: kiln.NewID(), OrganizationID: org.ID, At: now.UTC(), Kind: "invitation.accepted",
		ActorKind: kiln.AuditActorMember, ActorID: m.User.ID, ActorName: m.User.Name, ActorEmail: m.User.Email,
		Address: clientAddr(r), Target: inv.ID, Details: map[string]string{"member": m.User.Email, "role": string(m.Role)}})
	writeJSON(w, http.StatusCreated, acceptedBody{
		meBody: meBody{User: userBody{ID: m.User.ID, Email: m.User.Email, Name: m.User.Name},
			Organization: orgSummary(org), Membership: membershipBody{Role: string(m.Role)}},
		Token: secret,
	})
	return nil
}
