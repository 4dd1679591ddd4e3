package hostclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// AgentLoop is `kiln agent`: it claims a build of its organization's pool with the agent's
// token, runs it with a Host through the host API as a build host launched for it would, and
// claims again; one build at a time.
type AgentLoop struct {
	// URL is the service's base URL; Token the agent's token (never log it).
	URL   string
	Token string
	// Identity, in place of Token, is the instance identity one of kiln's hosted EC2 hosts
	// claims with (`kiln agent --ec2-host`). Such a host claims one build, runs it and stops.
	Identity *hostedhosts.Identity
	// Pool is the pool the agent believes its token is for ("": not checked); the service
	// refuses a claim naming another.
	Pool string
	// Platforms and EngineVersions are what the agent offers to build.
	Platforms      []string
	EngineVersions []string
	// Wait is how long one claim waits for a build (0: the most, 30 s; negative: not at all).
	Wait time.Duration
	// HTTP sends the claims; nil: the host client's default.
	HTTP *http.Client
	// NewHost makes the host that runs a claimed build, given its client.
	NewHost func(c *Client) *Host
	// RetryEvery is how long the loop waits after a claim failed for another reason than the
	// token (the service unreachable); 0: 5 s.
	RetryEvery time.Duration
	Logger     *slog.Logger
}

// ReasonAgentStopped is why an agent that is stopped fails the build it runs.
const ReasonAgentStopped = "interrupted: the agent was stopped"

// Run claims and runs builds until ctx ends (nil) or the service refuses the token (an
// invalid_token error: the agent was revoked or never existed). A hosted host (Identity) returns
// after its one build, and keeps asking when refused: a host not yet in service in its group
// becomes one, and the schedule terminates a host that may claim no more.
func (l *AgentLoop) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		c, err := l.Claim(ctx)
		if kiln.ErrorCode(err) == kiln.EInvalidToken && l.Identity == nil {
			return fmt.Errorf("the service refused the agent's token: %w", err)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			l.log().WarnContext(ctx, "claim a build", slog.String("error", err.Error()))
			t := time.NewTimer(cmp.Or(l.RetryEvery, 5*time.Second))
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			continue
		}
		if c != nil {
			l.runOne(ctx, c)
			if l.Identity != nil {
				return nil // one build per hosted host
			}
		}
	}
	return nil
}

// runOne runs a claimed build; if the agent is stopped meanwhile it fails the build at once
// rather than leaving it to the service's silent-host check.
func (l *AgentLoop) runOne(ctx context.Context, c *agentapi.ClaimAnswer) {
	// The host API is served beside the claim: the URL the agent reached the service at works
	// for it, where the service's idea of its own URL (hostUrl) may not (a LAN name, a proxy).
	client := &Client{BaseURL: l.URL, Credential: c.HostCredential, HTTP: l.HTTP}
	logger := l.log().With(slog.String("build_id", c.BuildID))
	logger.InfoContext(ctx, "claimed a build")
	status, err := l.NewHost(client).Run(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, ferr := client.Fail(fctx, ReasonAgentStopped); ferr != nil && kiln.ErrorCode(ferr) != kiln.EInvalidState {
			logger.WarnContext(fctx, "fail the interrupted build", slog.String("error", ferr.Error()))
		}
		logger.InfoContext(fctx, "stopped during the build")
	case err != nil:
		logger.WarnContext(ctx, "the build did not finish here", slog.String("error", err.Error()))
	default:
		logger.InfoContext(ctx, "the build ended", slog.String("status", string(status)))
	}
}

// Claim asks for one build, waiting up to Wait; nil when none came.
func (l *AgentLoop) Claim(ctx context.Context) (*agentapi.ClaimAnswer, error) {
	wait := min(l.Wait, 30*time.Second)
	switch {
	case l.Wait == 0:
		wait = 30 * time.Second
	case l.Wait < 0:
		wait = 0
	}
	body, err := json.Marshal(agentapi.ClaimRequest{Pool: l.Pool, Platforms: l.Platforms, EngineVersions: l.EngineVersions, WaitSeconds: int(wait / time.Second)})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(l.URL, "/")+agentapi.ClaimPath, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if l.Identity != nil {
		req.Header.Set(agentapi.HeaderInstanceIdentity, base64.StdEncoding.EncodeToString([]byte(l.Identity.Document)))
		req.Header.Set(agentapi.HeaderInstanceSignature, l.Identity.Signature)
	} else {
		req.Header.Set("Authorization", "Bearer "+l.Token)
	}
	req.Header.Set("Content-Type", "application/json")
	h := l.HTTP
	if h == nil {
		h = defaultHTTP
	}
	resp, err := h.Do(req)
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNoContent:
		return nil, nil
	case resp.StatusCode >= 300:
		var e agentapi.ErrorBody
		if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e) != nil || e.Error == "" {
			return nil, fmt.Errorf("claim: status %d", resp.StatusCode)
		}
		return nil, &kiln.Error{Code: e.Error, Message: e.Message, Fields: e.Fields}
	}
	var c agentapi.ClaimAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&c); err != nil {
		return nil, fmt.Errorf("claim: the answer is not JSON: %w", err)
	}
	if c.BuildID == "" || c.HostCredential == "" {
		return nil, errors.New("claim: the answer names no build")
	}
	return &c, nil
}

func (l *AgentLoop) log() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}
