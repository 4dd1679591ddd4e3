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

// BuildSetting is the part of a build setting the kiln command uses.
type BuildSetting struct {
	ID         string  `json:"id"`
	ProjectID  string  `json:"projectId"`
	Platform   string  `json:"platform"`
	BuildType  string  `json:"buildType"`
	Branch     *string `json:"branch"`
	StreamPath *string `json:"streamPath"`
	UEVersion  string  `json:"ueVersion"`
	Trigger    string  `json:"trigger"`
	Schedule   *string `json:"schedule"`
}

// Ref is the branch (GitHub) or stream (Perforce) the setting builds.
func (s BuildSetting) Ref() string {
	if s.StreamPath != nil {
		return *s.StreamPath
	}
	if s.Branch != nil {
		return *s.Branch
	}
	return ""
}

// ListBuildSettings answers a project's build settings.
func (c *Client) ListBuildSettings(ctx context.Context, projectID string) ([]BuildSetting, error) {
	var page struct {
		Items []BuildSetting `json:"items"`
	}
	if err := c.do(ctx, "GET", "/projects/"+url.PathEscape(projectID)+"/build-settings", nil, nil, &page); err != nil {
		return nil, err
	}
	return page.Items, nil
}
