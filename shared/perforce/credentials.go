package perforce

import (
	"context"
	"fmt"

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
	return Credentials{ServerURL: org.Perforce.ServerURL, UserName: org.Perforce.UserName,
		Ticket: string(ticket), Fingerprint: org.Perforce.Fingerprint}, nil
}

// Connector opens p4 clients with organizations' saved credentials.
type Connector struct {
	Verifier *Verifier
	Open     OpenFunc
}

// Connect opens a client for the organization's server: perforce_not_configured without saved
// credentials, perforce_auth_failed when the server cannot be reached or its fingerprint changed.
func (c *Connector) Connect(ctx context.Context, org *kiln.Organization) (*Client, error) {
	cr, err := SavedCredentials(org, c.Open)
	if err != nil {
		return nil, err
	}
	return c.Verifier.Open(ctx, org.ID, cr)
}
