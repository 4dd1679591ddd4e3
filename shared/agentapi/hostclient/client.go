// Package hostclient is the build host's side of the host API (package agentapi): a Client for
// its calls, and RunBuild, which runs the host's one build with the same runner.Runner that
// kiln serve runs builds with in-process, its lifecycle, log, sources and artifact store being
// calls to the service.
package hostclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/wake"
)

// Client calls the host API of the service at BaseURL with a build's host credential.
type Client struct {
	// BaseURL is the service's base URL (KILN_HOST_URL), without /host/v1.
	BaseURL string
	// Credential is the build's host credential (KILN_HOST_CREDENTIAL). Never log it.
	Credential string
	// TaskToken is the Step Functions task token of the state waiting for the host
	// (KILN_TASK_TOKEN; "" for none), sent with each heartbeat. Never log it.
	TaskToken string
	// HTTP sends the calls and the artifact's parts; nil: a client with a 2-minute timeout.
	HTTP *http.Client
}

// defaultHTTP bounds each call (a part of 16 MiB included).
var defaultHTTP = &http.Client{Timeout: 2 * time.Minute}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

// call sends in (nil: no body) to path under the host API and decodes the answer into out (nil:
// none expected). An error answer is a *kiln.Error with the service's code.
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	url := strings.TrimRight(c.BaseURL, "/") + agentapi.PathPrefix + path
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return fmt.Errorf("host API %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Credential)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("host API %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return errorAnswer(resp, method, path)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("host API %s %s: the answer is not JSON: %w", method, path, err)
	}
	return nil
}

// errorAnswer is the service's error answer as a *kiln.Error with its code; an answer without
// the error body (a proxy's page) is an error with the status.
func errorAnswer(resp *http.Response, method, path string) error {
	var e agentapi.ErrorBody
	if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e) != nil || e.Error == "" {
		return fmt.Errorf("host API %s %s: status %d", method, path, resp.StatusCode)
	}
	return &kiln.Error{Code: e.Error, Message: e.Message, Fields: e.Fields}
}

// Start reports what runs the build (CodeBuild's build id; "" for none) and fetches the job.
func (c *Client) Start(ctx context.Context, hostRunID string) (*agentapi.Job, error) {
	var job agentapi.Job
	if err := c.call(ctx, http.MethodPost, "start", agentapi.StartRequest{HostRunID: hostRunID}, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

// Heartbeat reports the host alive, with its task token; invalid_state once the build ended.
func (c *Client) Heartbeat(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, "heartbeat", agentapi.HeartbeatRequest{TaskToken: c.TaskToken}, nil)
}

// Progress records what the checkout found.
func (c *Client) Progress(ctx context.Context, p agentapi.ProgressRequest) error {
	return c.call(ctx, http.MethodPost, "progress", p, nil)
}

// Complete completes the build with its uploaded artifact.
func (c *Client) Complete(ctx context.Context, size int64, md5 string) (agentapi.BuildStatus, error) {
	var st agentapi.BuildStatus
	err := c.call(ctx, http.MethodPost, "complete", agentapi.CompleteRequest{Size: size, MD5: md5}, &st)
	return st, err
}

// Fail fails the build with reason (the service ends its log with it).
func (c *Client) Fail(ctx context.Context, reason string) (agentapi.BuildStatus, error) {
	var st agentapi.BuildStatus
	err := c.call(ctx, http.MethodPost, "fail", agentapi.FailRequest{Reason: reason}, &st)
	return st, err
}

// Heartbeats reports the host alive every interval until ctx ends. When the service answers that
// the build ended (invalid_state) or no longer knows the credential (invalid_token), it calls
// stop once and returns: the host's run is over. Other failures are retried at the next beat.
func (c *Client) Heartbeats(ctx context.Context, every time.Duration, stop func(reason error), onError func(error)) {
	beat := func(ctx context.Context) bool {
		err := c.Heartbeat(ctx)
		if code := kiln.ErrorCode(err); code == kiln.EInvalidState || code == kiln.EInvalidToken {
			stop(err)
			return false
		}
		if err != nil && ctx.Err() == nil && onError != nil {
			onError(err)
		}
		return true
	}
	if beat(ctx) {
		wake.Every(ctx, every, beat)
	}
}
