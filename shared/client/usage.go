package client

import (
	"context"
	"net/url"
)

// Usage is GET /organizations/:id/usage: a month's use of the organization against its plan.
// An Allowed of nil is unlimited.
type Usage struct {
	OrganizationID string `json:"organizationId"`
	Plan           string `json:"plan"`
	Month          string `json:"month"`
	BuildMinutes   struct {
		Used       int64            `json:"used"`
		Allowed    *int64           `json:"allowed"`
		ByPlatform map[string]int64 `json:"byPlatform"`
	} `json:"buildMinutes"`
	ConcurrentBuilds     UsageCount       `json:"concurrentBuilds"`
	Projects             UsageCount       `json:"projects"`
	ArtifactStorageBytes int64            `json:"artifactStorageBytes"`
	SkippedTriggers      map[string]int64 `json:"skippedTriggers"`
	// BuildCaches is what the organization's build caches hold now (nil: the server keeps none,
	// or could not list them).
	BuildCaches *UsageCaches `json:"buildCaches"`
}

// UsageCaches is the bytes and count of an organization's build caches and their cap (MaxBytes
// nil: no cap).
type UsageCaches struct {
	Bytes    int64  `json:"bytes"`
	Count    int    `json:"count"`
	MaxBytes *int64 `json:"maxBytes"`
}

// UsageCount is a count now and what the plan allows (nil: unlimited).
type UsageCount struct {
	Current int    `json:"current"`
	Allowed *int64 `json:"allowed"`
}

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
