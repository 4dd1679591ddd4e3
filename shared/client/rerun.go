package client

import (
	"context"
	"net/url"

	"github.com/kilnbuild/kiln/shared/api"
)

// BuildTrigger says who or what triggered a build: kind user, push, schedule or rerun.
type BuildTrigger = api.BuildTrigger

// Rerun queues a new build of the same setting, branch and commit or changelist as build id,
// and answers it (pending, with rerunOf set).
func (c *Client) Rerun(ctx context.Context, id string) (*Build, error) {
	var b Build
	if err := c.do(ctx, "POST", "/builds/"+url.PathEscape(id)+"/rerun", nil, struct{}{}, &b); err != nil {
		return nil, err
	}
	return &b, nil
}
