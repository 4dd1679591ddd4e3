package client

import (
	"context"
	"net/url"

	"github.com/kilnbuild/kiln/shared/api"
)

// Invitation is a pending invitation to the organization; Link and Mailed are set only when it
// was just created.
type Invitation = api.Invitation

// InvitationPage is one page of GET /organizations/:id/invitations.
type InvitationPage = api.List[Invitation]

// Invite invites a person by email with a role (owners and admins; only an owner invites an
// owner). The answer's Link is shown this once.
func (c *Client) Invite(ctx context.Context, orgID, email, role string) (*Invitation, error) {
	var inv Invitation
	body := map[string]string{"email": email, "role": role}
	if err := c.do(ctx, "POST", "/organizations/"+url.PathEscape(orgID)+"/invitations", nil, body, &inv); err != nil {
		return nil, err
	}
	return &inv, nil
}

// Invitations answers every pending invitation of the organization.
func (c *Client) Invitations(ctx context.Context, orgID string) ([]Invitation, error) {
	all := []Invitation{}
	q := url.Values{"limit": {"100"}}
	for {
		var p InvitationPage
		if err := c.do(ctx, "GET", "/organizations/"+url.PathEscape(orgID)+"/invitations", q, nil, &p); err != nil {
			return nil, err
		}
		all = append(all, p.Items...)
		if p.NextCursor == nil {
			return all, nil
		}
		q.Set("cursor", *p.NextCursor)
	}
}

// RevokeInvitation revokes an invitation; its link stops working.
func (c *Client) RevokeInvitation(ctx context.Context, orgID, id string) error {
	return c.do(ctx, "DELETE", "/organizations/"+url.PathEscape(orgID)+"/invitations/"+url.PathEscape(id), nil, nil, nil)
}
