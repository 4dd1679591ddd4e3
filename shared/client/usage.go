package client

import (
	"context"
	"net/url"

	"github.com/kilnbuild/kiln/shared/api"
)

// Usage is GET /organizations/:id/usage: a month's use of the organization against its plan.
// An Allowed of nil is unlimited.
type Usage = api.Usage

// UsageCaches is the bytes and count of an organization's build caches and their cap (MaxBytes
// nil: no cap).
type UsageCaches = api.UsageCaches

// UsageCount is a count now and what the plan allows (nil: unlimited).
type UsageCount = api.UsageCount

// Usage answers the usage of the token's organization in month (YYYY-MM; "" this month, UTC).
func (c *Client) Usage(ctx context.Context, month string) (*Usage, error) {
	me, err := c.Me(ctx)
	if err != nil {
		return nil, err
	}
	var q url.Values
	if month != "" {
		q = url.Values{"month": {month}}
	}
	var u Usage
	if err := c.do(ctx, "GET", "/organizations/"+url.PathEscape(me.Organization.ID)+"/usage", q, nil, &u); err != nil {
		return nil, err
	}
	return &u, nil
}
