package client

import (
	"context"
	"net/url"

	"github.com/kilnbuild/kiln/shared/api"
)

// Member is a member of the organization and their role.
type Member = api.Member

// MemberPage is one page of GET /organizations/:id/members.
type MemberPage = api.List[Member]

// Members answers every member of the token's organization.
func (c *Client) Members(ctx context.Context, orgID string) ([]Member, error) {
	var all []Member
	q := url.Values{"limit": {"100"}}
	for {
		var p MemberPage
		if err := c.do(ctx, "GET", "/organizations/"+url.PathEscape(orgID)+"/members", q, nil, &p); err != nil {
			return nil, err
		}
		all = append(all, p.Items...)
		if p.NextCursor == nil {
			return all, nil
		}
		q.Set("cursor", *p.NextCursor)
	}
}

// SetMemberRole gives a member a role (owners and admins; only an owner makes or unmakes an owner).
func (c *Client) SetMemberRole(ctx context.Context, orgID, userID, role string) (*Member, error) {
	var m Member
	if err := c.do(ctx, "PATCH", "/organizations/"+url.PathEscape(orgID)+"/members/"+url.PathEscape(userID), nil, map[string]string{"role": role}, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// RemoveMember removes a member and revokes their tokens.
func (c *Client) RemoveMember(ctx context.Context, orgID, userID string) error {
	return c.do(ctx, "DELETE", "/organizations/"+url.PathEscape(orgID)+"/members/"+url.PathEscape(userID), nil, nil, nil)
}

// Leave ends the token's own membership; its tokens, this one included, stop working.
func (c *Client) Leave(ctx context.Context, orgID string) error {
	return c.do(ctx, "DELETE", "/organizations/"+url.PathEscape(orgID)+"/membership", nil, nil, nil)
}
