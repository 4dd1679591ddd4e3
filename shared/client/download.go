package client

import (
	"context"
	"net/url"
)

// DownloadLink is the answer of GET /builds/:id/download: a signed URL of the artifact (it needs
// no Authorization) with the artifact's size and MD5.
type DownloadLink struct {
	URL         string `json:"url"`
	ExpiresAt   string `json:"expiresAt"`
	SizeBytes   int64  `json:"sizeBytes"`
	ChecksumMD5 string `json:"checksumMd5"`
	// FileName is the name to save the artifact under (a plain file name, no directory).
	FileName string `json:"fileName"`
}

// DownloadLink answers the signed download URL of a build's artifact.
func (c *Client) DownloadLink(ctx context.Context, buildID string) (*DownloadLink, error) {
	var d DownloadLink
	if err := c.do(ctx, "GET", "/builds/"+url.PathEscape(buildID)+"/download", nil, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Me is the answer of GET /auth/me.
type Me struct {
	User struct {
		ID    string `json:"id"`
		Email string `json:"email"`
		Name  string `json:"name"`
	} `json:"user"`
	Organization struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"organization"`
	Membership struct {
		Role string `json:"role"`
	} `json:"membership"`
}

// Me answers who the token belongs to.
func (c *Client) Me(ctx context.Context) (*Me, error) {
	var m Me
	if err := c.do(ctx, "GET", "/auth/me", nil, nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}
