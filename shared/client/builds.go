package client

import (
	"context"
	"net/url"
	"strconv"
)

// Build is a build as the API answers it (GET /builds, GET /builds/:id).
type Build struct {
	ID string `json:"id"`
	// Number is the build's number in its project; nil for a build from before builds were
	// numbered.
	Number           *int64    `json:"number"`
	ProjectID        string    `json:"projectId"`
	BuildSettingID   string    `json:"buildSettingId"`
	Status           string    `json:"status"`
	Platform         string    `json:"platform"`
	BuildType        string    `json:"buildType"`
	Branch           string    `json:"branch"`
	Commit           *string   `json:"commit"`
	CommitMessage    *string   `json:"commitMessage"`
	Changelist       *string   `json:"changelist"`
	UEVersion        string    `json:"ueVersion"`
	TriggeredBy      string    `json:"triggeredBy"`
	CreatedAt        string    `json:"createdAt"`
	StartedAt        *string   `json:"startedAt"`
	FinishedAt       *string   `json:"finishedAt"`
	DurationMs       *int64    `json:"durationMs"`
	FailureReason    *string   `json:"failureReason"`
	AutoDeployStatus *string   `json:"autoDeployStatus"`
	AutoDeployError  *string   `json:"autoDeployError"`
	Clean            bool      `json:"clean"`
	Cache            *CacheUse `json:"cache"`
	// RerunOf is the build this one re-runs; Trigger who or what triggered it.
	RerunOf *string       `json:"rerunOf"`
	Trigger *BuildTrigger `json:"trigger"`
	// Stage is the stage a running build is in; Progress its estimated progress (nil without
	// history to judge by).
	Stage    *string   `json:"stage"`
	Progress *Progress `json:"progress"`
	LogLines []LogLine `json:"logLines,omitempty"`
}

// Progress is a running build's estimated progress; RemainingMs is nil once it overruns.
type Progress struct {
	Stage       *string `json:"stage"`
	Percent     int     `json:"percent"`
	ElapsedMs   int64   `json:"elapsedMs"`
	RemainingMs *int64  `json:"remainingMs"`
	Overrun     bool    `json:"overrun"`
	BasedOn     int     `json:"basedOn"`
}

// CacheUse is how a build started: warm from the cache a build saved, or cold and why.
type CacheUse struct {
	State       string  `json:"state"`
	FromBuildID *string `json:"fromBuildId"`
	Reason      *string `json:"reason"`
}

// String says it in a few words: "warm (from <build>)" or "cold (<reason>)".
func (c *CacheUse) String() string {
	switch {
	case c == nil:
		return "-"
	case c.FromBuildID != nil:
		return c.State + " (from " + *c.FromBuildID + ")"
	case c.Reason != nil:
		return c.State + " (" + *c.Reason + ")"
	}
	return c.State
}

// Ended reports whether the build reached a status that never changes.
func (b *Build) Ended() bool { return Ended(b.Status) }

// Ended reports whether a build status is terminal (complete, failed, superseded).
func Ended(status string) bool {
	return status == "complete" || status == "failed" || status == "superseded"
}

// BuildFilter narrows GET /builds; empty fields are not sent.
type BuildFilter struct {
	ProjectID      string
	BuildSettingID string
	Status         string
	Limit          int
	Cursor         string
}

// BuildPage is one page of builds, newest first.
type BuildPage struct {
	Items      []Build `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

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
func (c *Client) GetBuild(ctx context.Context, id string) (*Build, error) {
	var b Build
	if err := c.do(ctx, "GET", "/builds/"+url.PathEscape(id), nil, nil, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// TriggerOptions are a trigger's overrides; empty fields are not sent.
type TriggerOptions struct {
	Branch     string `json:"branch,omitempty"`
	Commit     string `json:"commit,omitempty"`
	Changelist string `json:"changelist,omitempty"`
	// Clean asks for a clean build: no build cache is used, and the build replaces it.
	Clean bool `json:"clean,omitempty"`
}

// Triggered is the answer to a trigger.
type Triggered struct {
	BuildID        string `json:"buildId"`
	Number         *int64 `json:"number"`
	ProjectID      string `json:"projectId"`
	BuildSettingID string `json:"buildSettingId"`
	Status         string `json:"status"`
}

// Trigger queues a build of a project's build setting.
func (c *Client) Trigger(ctx context.Context, projectID, settingID string, o TriggerOptions) (*Triggered, error) {
	var t Triggered
	path := "/projects/" + url.PathEscape(projectID) + "/build-settings/" + url.PathEscape(settingID) + "/trigger"
	if err := c.do(ctx, "POST", path, nil, o, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Cancel cancels a pending or running build and answers it, now failed.
func (c *Client) Cancel(ctx context.Context, id string) (*Build, error) {
	var b Build
	if err := c.do(ctx, "POST", "/builds/"+url.PathEscape(id)+"/cancel", nil, struct{}{}, &b); err != nil {
		return nil, err
	}
	return &b, nil
}
