package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
	"github.com/kilnbuild/kiln/shared/plans"
)

// PerforceVerifier checks Perforce credentials with the server before they are saved.
type PerforceVerifier interface {
	Verify(ctx context.Context, orgID string, in perforce.Login, knownFingerprint string) (perforce.Verified, error)
	ReadProject(ctx context.Context, orgID string, cr perforce.Credentials, stream string, classic bool, uprojectPath string,
		parse func(path string, data []byte) (*kiln.UprojectInfo, error)) (*kiln.UprojectInfo, error)
	// Forget removes what kiln keeps for the organization's server besides the credentials
	// (trusted fingerprints).
	Forget(orgID string) error
}

// Perforce checks that the API starts (PATCH /organizations/:id/perforce, add-perforce) run p4
// against a customer's server; each organization may run perforceChecksAtOnce at a time and
// perforceChecksPerMinute a minute. A request refused before p4 ran (validation_failed) does not
// count.
const (
	perforceChecksAtOnce    = 1
	perforceChecksPerMinute = 10
	perforceBusyRetryAfter  = 5 // seconds, when a check of the organization is under way
)

// perforceChecks admits Perforce checks per organization.
type perforceChecks struct {
	running inUse
	rate    *limiters
}

func newPerforceChecks() *perforceChecks {
	return &perforceChecks{rate: newLimiters(RateLimit{PerSecond: perforceChecksPerMinute / 60.0, Burst: perforceChecksPerMinute})}
}

// start admits a check of orgID at time now. It returns done, to call with the check's error once
// it ended, or, when the check must wait, the seconds to wait.
func (c *perforceChecks) start(orgID string, now time.Time) (done func(error), retryAfter int) {
	release := c.running.acquire(slot{orgID, perforceChecksAtOnce})
	if release == nil {
		return nil, perforceBusyRetryAfter
	}
	ok, wait, refund := c.rate.take(orgID, now)
	if !ok {
		release()
		return nil, retryAfterSeconds(wait)
	}
	return func(err error) {
		if kiln.IsCode(err, kiln.EValidation) {
			refund()
		}
		release()
	}, 0
}

// perforceCheck admits a Perforce check of the organization, or answers 429 rate_limited.
func (s *Server) perforceCheck(w http.ResponseWriter, orgID string) (done func(error), err error) {
	done, retry := s.p4checks.start(orgID, s.now())
	if done == nil {
		return nil, busy(w, retry, "too many Perforce checks for the organization: %d at a time and %d a minute; retry after %d s",
			perforceChecksAtOnce, perforceChecksPerMinute, retry)
	}
	return done, nil
}

// perforceCredentials opens the organization's saved credentials.
func (s *Server) perforceCredentials(org *kiln.Organization) (perforce.Credentials, error) {
	if s.perforce == nil {
		return perforce.Credentials{}, kiln.Errorf(kiln.EPerforceNotConfigured, "Perforce is not available on this server")
	}
	cr, err := perforce.SavedCredentials(org, s.sealer.Open)
	if err != nil {
		return cr, err
	}
	cr.Renewed = perforce.KeepRenewed(context.Background(), s.orgs, s.sealer.Seal, org.ID, s.logger)
	return cr, nil
}

type perforceRequest struct {
	ServerURL *string `json:"serverUrl"`
	UserName  *string `json:"userName"`
	Ticket    *string `json:"ticket"`
	// Password, instead of ticket: kiln logs in with it and renews its own ticket.
	Password *string `json:"password"`
}

// putPerforce answers PATCH /organizations/:id/perforce: the credentials, a ticket or a password,
// are checked with the server (p4 trust, info, then login -s for a ticket, login -a -p for a
// password) before they are saved; wrong credentials or an unreachable server are 400
// perforce_auth_failed and nothing is saved. A password is sealed beside the ticket its login got.
func (s *Server) putPerforce(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	var req perforceRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	if err := s.planCheck(r.Context(), org.ID, func(pl *plans.Plans, org *kiln.Organization) error { return pl.CheckPerforce(org) }); err != nil {
		return err
	}
	if s.perforce == nil {
		return kiln.Errorf(kiln.EPerforceAuthFailed, "Perforce is not available on this server")
	}
	known := ""
	if org.Perforce != nil && org.Perforce.ServerURL == deref(req.ServerURL) {
		known = org.Perforce.Fingerprint
	}
	done, err := s.perforceCheck(w, org.ID)
	if err != nil {
		return err
	}
	in := perforce.Login{ServerURL: deref(req.ServerURL), UserName: deref(req.UserName), Ticket: deref(req.Ticket), Password: deref(req.Password)}
	v, err := s.perforce.Verify(r.Context(), org.ID, in, known)
	done(err)
	if err != nil {
		return err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	creds := &kiln.PerforceCredentials{ServerURL: in.ServerURL, UserName: in.UserName, Fingerprint: v.Fingerprint, UpdatedAt: now,
		Ticket: s.sealer.Seal([]byte(in.Ticket), perforce.TicketAD(org.ID))}
	if in.Password != "" {
		creds.Ticket, creds.TicketExpiresAt = s.sealer.Seal([]byte(v.Ticket), perforce.TicketAD(org.ID)), v.TicketExpiresAt
		creds.Password = s.sealer.Seal([]byte(in.Password), perforce.PasswordAD(org.ID))
	}
	updated, err := s.orgs.SetPerforce(r.Context(), org.ID, creds, now)
	if err != nil {
		return err
	}
	s.auth.ForgetOrganization(org.ID)
	writeJSON(w, http.StatusOK, renderOrganization(updated))
	return nil
}

// deletePerforce answers DELETE /organizations/:id/perforce: the credentials and the trusted
// fingerprint are removed; builds of Perforce projects fail until new credentials are saved.
func (s *Server) deletePerforce(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	org, err := ownOrganization(r, p)
	if err != nil {
		return err
	}
	if _, err := s.orgs.SetPerforce(r.Context(), org.ID, nil, s.now().UTC().Truncate(time.Millisecond)); err != nil {
		return err
	}
	s.auth.ForgetOrganization(org.ID)
	if s.perforce != nil {
		if err := s.perforce.Forget(org.ID); err != nil {
			loggerOf(r.Context()).WarnContext(r.Context(), "forget Perforce state", slog.String("error", err.Error()))
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
