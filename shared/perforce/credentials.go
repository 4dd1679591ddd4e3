package perforce

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// TicketAD is the associated data a saved ticket is sealed with: it binds the sealed ticket to
// its organization, so that it cannot be moved to another one.
func TicketAD(orgID string) []byte { return []byte("perforce:" + orgID) }

// OpenFunc opens a sealed secret (keyring.Sealer.Open).
type OpenFunc func(sealed, associated []byte) ([]byte, error)

// SavedCredentials opens an organization's saved credentials; perforce_not_configured when it
// has none.
func SavedCredentials(org *kiln.Organization, open OpenFunc) (Credentials, error) {
	if org.Perforce == nil {
		return Credentials{}, kiln.Errorf(kiln.EPerforceNotConfigured, "save the organization's Perforce credentials first (PATCH /organizations/%s/perforce)", org.ID)
	}
	ticket, err := open(org.Perforce.Ticket, TicketAD(org.ID))
	if err != nil {
		return Credentials{}, fmt.Errorf("perforce: open the saved ticket: %w", err)
	}
	cr := Credentials{ServerURL: org.Perforce.ServerURL, UserName: org.Perforce.UserName,
		Ticket: string(ticket), Fingerprint: org.Perforce.Fingerprint, TicketExpiresAt: org.Perforce.TicketExpiresAt}
	if org.Perforce.Password != nil {
		password, err := open(org.Perforce.Password, PasswordAD(org.ID))
		if err != nil {
			return Credentials{}, fmt.Errorf("perforce: open the saved password: %w", err)
		}
		cr.Password = string(password)
	}
	return cr, nil
}

// PasswordAD is the associated data a saved password is sealed with (bound to its organization,
// and apart from its ticket).
func PasswordAD(orgID string) []byte { return []byte("perforce-password:" + orgID) }

// CredentialStore saves an organization's Perforce credentials (store.Store).
type CredentialStore interface {
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
	SetPerforce(ctx context.Context, orgID string, creds *kiln.PerforceCredentials, at time.Time) (*kiln.Organization, error)
}

// KeepRenewed returns the Credentials.Renewed that saves a ticket kiln's login renewed, sealed,
// with its expiry, into the organization's credentials as stored now (unless they were replaced
// or removed meanwhile); failures are logged, the build goes on with the new ticket.
func KeepRenewed(ctx context.Context, st CredentialStore, seal func(plaintext, associated []byte) []byte, orgID string, logger *slog.Logger) func(ticket string, expires time.Time) {
	return func(ticket string, expires time.Time) {
		ctx := context.WithoutCancel(ctx)
		org, err := st.GetOrganization(ctx, orgID)
		if err != nil || org.Perforce == nil || org.Perforce.Password == nil {
			return
		}
		creds := *org.Perforce
		creds.Ticket, creds.TicketExpiresAt = seal([]byte(ticket), TicketAD(orgID)), expires
		if _, err := st.SetPerforce(ctx, orgID, &creds, time.Now().UTC().Truncate(time.Millisecond)); err != nil && logger != nil {
			logger.WarnContext(ctx, "keep a renewed Perforce ticket", slog.String("org_id", orgID), slog.String("error", err.Error()))
		}
	}
}

// Connector opens p4 clients with organizations' saved credentials.
type Connector struct {
	Verifier *Verifier
	Open     OpenFunc
	// Store and Seal, when set, keep the tickets kiln's login renews for a saved password.
	Store  CredentialStore
	Seal   func(plaintext, associated []byte) []byte
	Logger *slog.Logger
}

// Connect opens a client for the organization's server: perforce_not_configured without saved
// credentials, perforce_auth_failed when the server cannot be reached or its fingerprint changed.
func (c *Connector) Connect(ctx context.Context, org *kiln.Organization) (*Client, error) {
	cr, err := SavedCredentials(org, c.Open)
	if err != nil {
		return nil, err
	}
	if c.Store != nil && c.Seal != nil {
		cr.Renewed = KeepRenewed(ctx, c.Store, c.Seal, org.ID, c.Logger)
	}
	return c.Verifier.Open(ctx, org.ID, cr)
}
