package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
)

// LogLine is one line of a build's log, with its number in the log (from 1).
type LogLine = api.NumberedLogLine

// LogPage is one page of GET /builds/:id/logs?format=json. NextCursor is nil once the build has
// ended and its last line was returned.
type LogPage = api.LogPage

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
	failures := 0
	for {
		p, err := c.LogPage(ctx, buildID, cursor, 1000, wait)
		if err != nil {
			// Following a long build outlives a restart of the service, a proxy's hiccup or a
			// spent rate budget: those are waited out (the cursor keeps the place).
			if !follow || failures >= followRetries || !passing(ctx, err) {
				return "", err
			}
			if !c.pause(ctx, failures, err) {
				return "", ctx.Err()
			}
			failures++
			continue
		}
		failures = 0
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

// followRetries is how many failures in a row following a log waits out (about 6 minutes with
// the pauses below).
const followRetries = 10

// passing reports whether err may go away by itself: no answer at all, 429, or a 5xx. An answer
// that is not kiln's API will not.
func passing(ctx context.Context, err error) bool {
	var na *NotAPIError
	if ctx.Err() != nil || errors.As(err, &na) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status == http.StatusTooManyRequests || ae.Status >= 500
	}
	return true
}

// pause waits before the retry after the nth failure in a row: Retry-After when the API gave one,
// else retryBase doubled each time, at most a minute. It is false when ctx ended first.
func (c *Client) pause(ctx context.Context, n int, err error) bool {
	d := min(c.retryBase<<n, time.Minute)
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		d = time.Duration(ae.RetryAfter) * time.Second
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
