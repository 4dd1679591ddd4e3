package client

import (
	"context"
	"fmt"
	"net/url"

	"github.com/kilnbuild/kiln/shared/api"
)

// DownloadLink is the answer of GET /builds/:id/download: a signed URL of the artifact (it needs
// no Authorization) with the artifact's size and MD5, and the file name to save it under.
type DownloadLink = api.DownloadLink

// DownloadLink answers the signed download URL of a build's artifact.
func (c *Client) DownloadLink(ctx context.Context, buildID string) (*DownloadLink, error) {
	var d DownloadLink
	if err := c.do(ctx, "GET", "/builds/"+url.PathEscape(buildID)+"/download", nil, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Me is the answer of GET /auth/me.
type Me = api.Me

// Me answers who the token belongs to and the organization it acts for: an API token always
// acts for one, so its Organization and Membership are never nil.
func (c *Client) Me(ctx context.Context) (*Me, error) {
	var m Me
	if err := c.do(ctx, "GET", "/auth/me", nil, nil, &m); err != nil {
		return nil, err
	}
	if m.Organization == nil || m.Membership == nil {
		return nil, fmt.Errorf("GET %s/auth/me: the token acts for no organization", c.baseURL)
	}
	return &m, nil
}
