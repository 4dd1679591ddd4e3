package perforce

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/outbound"
)

// Verifier checks an organization's Perforce credentials against its server before they are
// saved: the server URL strictly parsed, the host resolved here and checked like every outbound
// address, then `p4 trust -y` (ssl), `p4 info` and `p4 login -s`.
type Verifier struct {
	P4       string
	Dir      string // private directories live under it, one per organization
	Allow    []netip.Prefix
	Resolver Resolver
	Timeout  time.Duration
}

// Login is what a customer gives kiln to reach their server: a ticket, or a password kiln logs
// in with (one of the two).
type Login struct {
	ServerURL, UserName, Ticket, Password string
}

// Verified is what a check of a Login learnt: the server's fingerprint (ssl) and, for a password,
// the ticket kiln's login got and when it expires.
type Verified struct {
	Fingerprint     string
	Ticket          string
	TicketExpiresAt time.Time
}

// Verify checks the login with the server. knownFingerprint is the one trusted before for the
// same server; a different one now is refused. Errors are validation_failed for a bad or
// non-public server address, or a ticket and a password both or neither, and
// perforce_auth_failed when the server refused the credentials or could not be reached.
func (v *Verifier) Verify(ctx context.Context, orgID string, in Login, knownFingerprint string) (Verified, error) {
	errs := kiln.FieldErrors{}
	u, err := ParseServerURL(in.ServerURL)
	if err != nil {
		errs.Add("serverUrl", "must be ssl:<host>:<port> (or ssl4:, ssl6:, ssl46:, ssl64:, tcp:)")
	}
	if user := in.UserName; user == "" || len(user) > 255 || strings.HasPrefix(user, "-") || strings.IndexFunc(user, isControlOrSpace) >= 0 {
		errs.Add("userName", "is required: a Perforce user name without spaces")
	}
	switch {
	case in.Ticket != "" && in.Password != "":
		errs.Add("password", "give a ticket or a password, not both")
	case in.Password != "":
		if len(in.Password) > 1024 || strings.ContainsAny(in.Password, "\r\n\x00") {
			errs.Add("password", "must be one line of at most 1024 characters")
		}
	case in.Ticket == "" || len(in.Ticket) > 4096 || strings.ContainsAny(in.Ticket, "\r\n\x00"):
		errs.Add("ticket", "is required: a Perforce ticket on one line (p4 login -p), or give password instead")
	}
	if err := errs.Err(); err != nil {
		return Verified{}, err
	}
	addr, err := Resolve(ctx, v.Resolver, u, v.Allow)
	var blocked *outbound.BlockedError
	switch {
	case errors.As(err, &blocked):
		return Verified{}, kiln.FieldError(kiln.EValidation, "the Perforce server's address is not public",
			"serverUrl", "resolves to an address kiln may not reach (see KILN_OUTBOUND_ALLOW)")
	case err != nil:
		return Verified{}, kiln.Errorf(kiln.EPerforceAuthFailed, "the Perforce server could not be reached")
	}
	dir := filepath.Join(v.Dir, orgID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Verified{}, fmt.Errorf("perforce: private directory: %w", err)
	}
	c := &Client{P4: v.P4, Server: u, Address: addr.String(), User: in.UserName, Ticket: in.Ticket, Password: in.Password, Dir: dir,
		Fingerprint: knownFingerprint, Timeout: v.Timeout}
	var out Verified
	if in.Password == "" {
		out.Fingerprint, err = c.Check(ctx)
	} else {
		out, err = c.checkPassword(ctx)
	}
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, ErrAuth):
		what := "ticket"
		if in.Password != "" {
			what = "password"
		}
		return Verified{}, kiln.Errorf(kiln.EPerforceAuthFailed, "the Perforce server rejected the user name or %s", what)
	case errors.Is(err, ErrTrust):
		return Verified{}, kiln.Errorf(kiln.EPerforceAuthFailed, "the Perforce server's ssl fingerprint changed since it was trusted; nothing was saved")
	case errors.Is(err, ErrUnreachable), errors.Is(err, ErrTimeout):
		return Verified{}, kiln.Errorf(kiln.EPerforceAuthFailed, "the Perforce server could not be reached")
	default:
		return Verified{}, err
	}
}

// checkPassword is Check for a password: trust on first contact (ssl), p4 info, then a login
// (p4 login -a -p, then login -s for the ticket's expiry).
func (c *Client) checkPassword(ctx context.Context) (Verified, error) {
	fp, err := c.Trust(ctx)
	if err != nil {
		return Verified{}, err
	}
	if _, err := c.Info(ctx); err != nil {
		return Verified{}, err
	}
	ticket, expires, err := c.Login(ctx)
	if err != nil {
		return Verified{}, err
	}
	return Verified{Fingerprint: fp, Ticket: ticket, TicketExpiresAt: expires}, nil
}

// Credentials are an organization's saved Perforce login, with the ticket (and password) opened.
type Credentials struct {
	ServerURL, UserName, Ticket, Fingerprint string
	// Password, when the customer gave one, logs in again for a new ticket before
	// TicketExpiresAt (within RenewBefore) or when the server says the session expired; Renewed
	// (nil: nobody) is told of each new ticket, to keep it.
	Password        string
	TicketExpiresAt time.Time
	Renewed         func(ticket string, expires time.Time)
}

// Open opens a client for saved credentials, checking the address again (DNS may have moved)
// and the server's fingerprint against the recorded one. Its errors are the API's
// (perforce_auth_failed with a reason).
func (v *Verifier) Open(ctx context.Context, orgID string, cr Credentials) (*Client, error) {
	u, err := ParseServerURL(cr.ServerURL)
	if err != nil {
		return nil, kiln.Errorf(kiln.EPerforceAuthFailed, "the saved Perforce server URL is not valid; save the credentials again")
	}
	addr, err := Resolve(ctx, v.Resolver, u, v.Allow)
	if err != nil {
		return nil, kiln.Errorf(kiln.EPerforceAuthFailed, "the Perforce server could not be reached")
	}
	dir := filepath.Join(v.Dir, orgID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("perforce: private directory: %w", err)
	}
	c := &Client{P4: v.P4, Server: u, Address: addr.String(), User: cr.UserName, Ticket: cr.Ticket, Dir: dir,
		Fingerprint: cr.Fingerprint, Timeout: v.Timeout, Password: cr.Password, Renewed: cr.Renewed}
	if _, err := c.Trust(ctx); err != nil {
		return nil, asKiln(err)
	}
	if err := c.RenewIfDue(ctx, cr.TicketExpiresAt, time.Now()); err != nil {
		return nil, asKiln(err)
	}
	return c, nil
}

// asKiln turns p4 failures into the API's errors (perforce_auth_failed with a reason); other
// errors are returned as they are.
func asKiln(err error) error {
	switch {
	case errors.Is(err, ErrAuth):
		return kiln.Errorf(kiln.EPerforceAuthFailed, "the Perforce server rejected the saved credentials (an expired ticket, or a changed password?); save them again")
	case errors.Is(err, ErrTrust):
		return kiln.Errorf(kiln.EPerforceAuthFailed, "the Perforce server's ssl fingerprint changed since it was trusted")
	case errors.Is(err, ErrUnreachable), errors.Is(err, ErrTimeout):
		return kiln.Errorf(kiln.EPerforceAuthFailed, "the Perforce server could not be reached")
	default:
		return err
	}
}

// ReadProject checks that the stream exists (for a classic depot path, that the depot directory
// holds files) and reads its .uproject: the one at uprojectPath (relative to the stream or
// directory), or the only one up to depth 3. parse reads the file's JSON.
func (v *Verifier) ReadProject(ctx context.Context, orgID string, cr Credentials, stream string, classic bool, uprojectPath string,
	parse func(path string, data []byte) (*kiln.UprojectInfo, error)) (*kiln.UprojectInfo, error) {
	c, err := v.Open(ctx, orgID, cr)
	if err != nil {
		return nil, err
	}
	var ok bool
	if classic {
		var dirs []string
		dirs, err = c.Dirs(ctx, stream)
		ok = len(dirs) > 0
	} else {
		ok, err = c.StreamExists(ctx, stream)
	}
	if err != nil {
		return nil, asKiln(err)
	}
	switch {
	case !ok && classic:
		return nil, kiln.FieldError(kiln.EValidation, "no such depot path on the Perforce server", "depotPath", "no files under it")
	case !ok:
		return nil, kiln.FieldError(kiln.EValidation, "no such stream on the Perforce server", "streamPath", "no such stream")
	}
	if uprojectPath == "" {
		found, err := c.FindUprojects(ctx, stream)
		if err != nil {
			return nil, asKiln(err)
		}
		var rel []string
		for _, f := range found {
			rel = append(rel, strings.TrimPrefix(f, stream+"/"))
		}
		switch len(rel) {
		case 0:
			return nil, kiln.Errorf(kiln.EUprojectNotFound, "no .uproject file up to 3 directories deep in %s", stream)
		case 1:
			uprojectPath = rel[0]
		default:
			return nil, &kiln.Error{Code: kiln.EMultipleUprojects, Message: "several .uproject files; pass uprojectPath", Candidates: rel}
		}
	}
	data, err := c.Print(ctx, stream+"/"+uprojectPath)
	if errors.Is(err, ErrNotFound) {
		return nil, kiln.Errorf(kiln.EUprojectNotFound, "no %s in %s", uprojectPath, stream)
	}
	if err != nil {
		return nil, asKiln(err)
	}
	return parse(uprojectPath, data)
}

// Forget removes the organization's private p4 directory (trusted fingerprints, p4's own files)
// once its credentials are removed; the next credentials start from first contact again.
func (v *Verifier) Forget(orgID string) error {
	if orgID == "" || strings.ContainsAny(orgID, `/\.`) {
		return fmt.Errorf("perforce: invalid organization id %q", orgID)
	}
	if err := os.RemoveAll(filepath.Join(v.Dir, orgID)); err != nil {
		return fmt.Errorf("perforce: forget %s: %w", orgID, err)
	}
	return nil
}
