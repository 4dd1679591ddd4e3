package client

import (
	"context"
	"net/url"

	"github.com/kilnbuild/kiln/shared/api"
)

// Project is a project as GET /projects lists it.
type Project = api.ProjectItem

// ProjectPage is one page of GET /projects, newest first.
type ProjectPage = api.List[Project]

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

// BuildSetting is a project's build setting.
type BuildSetting = api.BuildSetting

// ListBuildSettings answers a project's build settings.
func (c *Client) ListBuildSettings(ctx context.Context, projectID string) ([]BuildSetting, error) {
	var page api.List[BuildSetting]
	if err := c.do(ctx, "GET", "/projects/"+url.PathEscape(projectID)+"/build-settings", nil, nil, &page); err != nil {
		return nil, err
	}
	return page.Items, nil
}
