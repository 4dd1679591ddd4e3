package client

import (
	"context"
	"net/url"
)

// Project is the part of a project the kiln command uses.
type Project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ProjectPage is one page of GET /projects, newest first.
type ProjectPage struct {
	Items      []Project `json:"items"`
	NextCursor *string   `json:"nextCursor"`
}

// ListProjects answers one page of the organization's projects (from the first with cursor "").
func (c *Client) ListProjects(ctx context.Context, cursor string) (*ProjectPage, error) {
	q := url.Values{"limit": {"100"}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var p ProjectPage
	if err := c.do(ctx, "GET", "/projects", q, nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
