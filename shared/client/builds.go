package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/kilnbuild/kiln/shared/api"
)

// Build is a build as the API answers it (GET /builds, POST /builds/:id/rerun).
type Build = api.Build

// BuildDetail is a build with its most recent log lines (GET /builds/:id, POST
// /builds/:id/cancel).
type BuildDetail = api.BuildDetail

// Progress is a running build's estimated progress; RemainingMs is nil once it overruns.
type Progress = api.Progress

// CacheUse is how a build started: warm from the cache a build saved, or cold and why.
type CacheUse = api.CacheUse

// Ended reports whether a build status is terminal (complete, failed, superseded).
func Ended(status string) bool { return api.Ended(status) }

// BuildFilter narrows GET /builds; empty fields are not sent.
type BuildFilter struct {
	ProjectID      string
	BuildSettingID string
	Status         string
	Limit          int
	Cursor         string
}

// BuildPage is one page of builds, newest first.
type BuildPage = api.List[Build]

// ListBuilds answers one page of GET /builds.
func (c *Client) ListBuilds(ctx context.Context, f BuildFilter) (*BuildPage, error) {
	q := url.Values{}
	for k, v := range map[string]string{"projectId": f.ProjectID, "buildSettingId": f.BuildSettingID, "status": f.Status, "cursor": f.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var p BuildPage
	if err := c.do(ctx, "GET", "/builds", q, nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// GetBuild answers GET /builds/:id.
func (c *Client) GetBuild(ctx context.Context, id string) (*BuildDetail, error) {
	var b BuildDetail
	if err := c.do(ctx, "GET", "/builds/"+url.PathEscape(id), nil, nil, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// TriggerOptions are a trigger's overrides; empty fields are not sent.
type TriggerOptions struct {
	Branch     string
	Commit     string
	Changelist string
	// Clean asks for a clean build: no build cache is used, and the build replaces it.
	Clean bool
}

// request is the body of the trigger request with these overrides.
func (o TriggerOptions) request() api.TriggerRequest {
	r := api.TriggerRequest{Branch: nonEmpty(o.Branch), Commit: nonEmpty(o.Commit), Changelist: nonEmpty(o.Changelist)}
	if o.Clean {
		r.Clean = &o.Clean
	}
	return r
}

// nonEmpty is s, or nil (not sent) when it is empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Triggered is the answer to a trigger.
type Triggered = api.TriggerAccepted

// Trigger queues a build of a project's build setting.
func (c *Client) Trigger(ctx context.Context, projectID, settingID string, o TriggerOptions) (*Triggered, error) {
	var t Triggered
	path := "/projects/" + url.PathEscape(projectID) + "/build-settings/" + url.PathEscape(settingID) + "/trigger"
	if err := c.do(ctx, "POST", path, nil, o.request(), &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Cancel cancels a pending or running build and answers it, now failed.
func (c *Client) Cancel(ctx context.Context, id string) (*BuildDetail, error) {
	var b BuildDetail
	if err := c.do(ctx, "POST", "/builds/"+url.PathEscape(id)+"/cancel", nil, struct{}{}, &b); err != nil {
		return nil, err
	}
	return &b, nil
}
