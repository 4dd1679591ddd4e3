package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/api"
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

func renderInvitation(inv *kiln.Invitation) api.Invitation {
	return api.Invitation{ID: inv.ID, Email: inv.Email, Role: string(inv.Role),
		InvitedBy: api.InvitedBy{ID: inv.InvitedByID, Name: inv.InvitedByName},
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
	api.Me
	// Token is the new member's first API token, for an invitation accepted without signing in.
	Token string `json:"token,omitempty"`
}

// acceptInvitation answers POST /invitations/accept. With a console session (GitHub sign-in), the
// signed-in user joins the organization, if the invitation was sent to their verified email, and
// the session switches to it. Without a token (only where GitHub sign-in is off), the secret and
// the person's name make them a new member with the invited email and role, and a first API
// token, shown once. Every attempt takes from the client address's budget of failed sign-ins, so
// secrets cannot be guessed fast; a secret that is unknown, used, revoked or expired gets one
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
	var caller *auth.Principal
	if _, ok := bearerToken(r); ok {
		p, err := s.authenticate(r)
		if err != nil {
			return err
		}
		if p.Session == nil {
			return kiln.Errorf(kiln.EBadRequest, "accept an invitation signed in to the console, or without a token; an API token cannot")
		}
		caller = p
	} else if s.signIn != nil {
		return kiln.Errorf(kiln.EInvalidToken, "sign in with GitHub to accept this invitation")
	}
	var req acceptInvitationRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	errs := kiln.FieldErrors{}
	if req.Secret == "" {
		errs.Add("secret", "is required")
	}
	if caller == nil {
		kiln.ValidateName("name", strings.TrimSpace(req.Name), errs)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	inv, org, err := s.pendingInvitation(r, req.Secret, now)
	if err != nil {
		return err
	}
	if caller != nil {
		return s.acceptSignedIn(w, r, caller, inv, org, now)
	}
	m, secret, tok := accounts.NewMember(org.ID, inv.Email, req.Name, inv.Role, now)
	if err := m.Validate(); err != nil {
		return err
	}
	if err := s.invites.AcceptInvitation(r.Context(), inv, now, m, tok); err != nil {
		return err
	}
	s.recordAccepted(r, inv, m, now)
	me, err := s.me(r.Context(), &auth.Principal{Organization: org, Member: m})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, acceptedBody{Me: me, Token: secret})
	return nil
}

// pendingInvitation finds the invitation a secret opens and its organization; anything that does
// not make a valid invitation is kiln.ErrInvitationInvalid.
func (s *Server) pendingInvitation(r *http.Request, secret string, now time.Time) (*kiln.Invitation, *kiln.Organization, error) {
	if !auth.WellFormedInvitation(secret) {
		return nil, nil, kiln.ErrInvitationInvalid()
	}
	inv, err := s.invites.GetInvitationByHash(r.Context(), auth.HashToken(secret))
	if kiln.IsCode(err, kiln.ENotFound) || err == nil && inv.Expired(now) {
		return nil, nil, kiln.ErrInvitationInvalid()
	}
	if err != nil {
		return nil, nil, err
	}
	org, err := s.orgs.GetOrganization(r.Context(), inv.OrganizationID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, nil, kiln.ErrInvitationInvalid()
	}
	if err != nil {
		return nil, nil, err
	}
	return inv, org, nil
}

// acceptSignedIn makes the signed-in user a member by an invitation sent to their verified
// email, and switches their session to the organization. An invitation for another email stays
// for its addressee.
func (s *Server) acceptSignedIn(w http.ResponseWriter, r *http.Request, p *auth.Principal, inv *kiln.Invitation, org *kiln.Organization, now time.Time) error {
	ctx := r.Context()
	u, err := s.users.GetGitHubUser(ctx, p.Session.UserID)
	if err != nil {
		return err
	}
	if kiln.NormalizeEmail(u.Email) != kiln.NormalizeEmail(inv.Email) {
		return kiln.Errorf(kiln.EInsufficientScope,
			"this invitation was sent to another email address than your GitHub account's verified primary email (%s); sign in with the account it was sent to, or ask for an invitation to %s",
			u.Email, u.Email)
	}
	m := &kiln.Member{OrganizationID: org.ID, Role: inv.Role, CreatedAt: now.UTC().Truncate(time.Millisecond), User: u.User}
	if err := s.invites.AcceptInvitation(ctx, inv, now, m, nil); err != nil {
		if kiln.IsCode(err, kiln.EConflict) {
			return kiln.Errorf(kiln.EConflict, "you are already a member of %s", org.Name)
		}
		return err
	}
	s.recordAccepted(r, inv, m, now)
	sess, err := s.users.SetSessionOrganization(ctx, u.ID, p.Session.ID, org.ID)
	if err != nil {
		return err
	}
	return s.writeMe(w, r, &auth.Principal{Organization: org, Member: m, Session: sess}, http.StatusCreated)
}

func (s *Server) recordAccepted(r *http.Request, inv *kiln.Invitation, m *kiln.Member, now time.Time) {
	s.recordAudit(r, &kiln.AuditEvent{ID: kiln.NewID(), OrganizationID: m.OrganizationID, At: now.UTC(), Kind: "invitation.accepted",
		ActorKind: kiln.AuditActorMember, ActorID: m.User.ID, ActorName: m.User.Name, ActorEmail: m.User.Email,
		Address: clientAddr(r), Target: inv.ID, Details: map[string]string{"member": m.User.Email, "role": string(m.Role)}})
}
