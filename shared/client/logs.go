package client

import (
	"context"
	"net/url"
	"strconv"
)

// LogLine is one line of a build's log.
type LogLine struct {
	Seq       int64  `json:"seq"`
	Timestamp string `json:"timestamp"`
	Level     string `json:"level"`
	Message   string `json:"message"`
}

// LogPage is one page of GET /builds/:id/logs?format=json. NextCursor is nil once the build has
// ended and its last line was returned.
type LogPage struct {
	Items       []LogLine `json:"items"`
	NextCursor  *string   `json:"nextCursor"`
	BuildStatus string    `json:"buildStatus"`
}

// MaxLogWait is the longest wait, in seconds, the API accepts for a log page.
const MaxLogWait = 20

// LogPage answers the log lines after cursor (from the first with ""), at most limit of them
// (0: the API's default). With wait > 0 (seconds, at most MaxLogWait) the API holds the request
// until a line is written or the build ends.
func (c *Client) LogPage(ctx context.Context, buildID, cursor string, limit, wait int) (*LogPage, error) {
	q := url.Values{"format": {"json"}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if wait > 0 {
		q.Set("wait", strconv.Itoa(min(wait, MaxLogWait)))
	}
	var p LogPage
	if err := c.do(ctx, "GET", "/builds/"+url.PathEscape(buildID)+"/logs", q, nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Logs calls visit with every line of the build's log, in order. With follow it goes on while
// the build runs (long-polling pages) and returns once the log is complete; without it, it returns
// after the lines written so far. It answers the build's status at the last page.
func (c *Client) Logs(ctx context.Context, buildID string, follow bool, visit func(LogLine) error) (string, error) {
	cursor, wait := "", 0
	if follow {
		wait = MaxLogWait
	}
	for {
		p, err := c.LogPage(ctx, buildID, cursor, 1000, wait)
		if err != nil {
			return "", err
		}
		for _, l := range p.Items {
			if err := visit(l); err != nil {
				return p.BuildStatus, err
			}
		}
		if p.NextCursor == nil {
			return p.BuildStatus, nil
		}
		if !follow && len(p.Items) == 0 {
			return p.BuildStatus, nil
		}
		cursor = *p.NextCursor
	}
}
